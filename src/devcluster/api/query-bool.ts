// Boolean query parameters as the real API server decodes them. Its parameter codec (apimachinery
// runtime.Convert_Slice_string_To_bool, used for ListOptions.watch, PodLogOptions.follow, PodExecOptions.stdin,
// DeleteOptions.orphanDependents, ...) never rejects a value: absent, "0" and "false" in any case are false, anything
// else (including "" and "True", which the Python client sends) is true. It is not strconv.ParseBool: `?watch=yes`
// is a watch on a real server, not a 400.

/** a boolean query parameter: its first value decides, as the parameter codec reads it */
export function queryBool(q: URLSearchParams, name: string): boolean {
  return queryBoolValue(q.get(name));
}

export function queryBoolValue(value: string | null): boolean {
  if (value === null) return false;
  return value !== '0' && value.toLowerCase() !== 'false';
}
