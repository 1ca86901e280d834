# Shared by check, in and out: the request (JSON on stdin, one line, as berth and Concourse send it) and a
# field of it. Enough JSON for flat string fields with unique names; a real resource would use jq.
request=$(cat)
field() { printf '%s' "$request" | sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
