/**
 * Deleting everything of one berth instance (shutdown, and `--prune-start` for a crashed predecessor),
 * and saying so when something stays: it expires and `berth gc` removes it then.
 */
import { LABEL_OWNER } from '../runtime/pod-rules.js';
import { ANNOTATION_KEPT_FAILED } from './recovery.js';
import type { ServeCluster } from './cluster.js';

/** An object berth could not delete (after retries) is said so, with what ends it. */
export function leftBehind(what: string, err: Error): void {
  process.stderr.write(`berth serve: ${what} could not be deleted (${err.message}); it expires at its berth.dev/expires-at and \`berth gc\` removes it then\n`);
}

/** Deletes every pod (but those kept for debugging), Service, claim and NetworkPolicy of the instance. */
export async function pruneInstance(cluster: ServeCluster, owner: string): Promise<void> {
  const selector = `${LABEL_OWNER}=${owner}`;
  const listed =
    <T>(what: string) =>
    (err: Error): T[] => {
      process.stderr.write(
        `berth serve: could not list ${what} to delete them (${err.message}); they expire at their berth.dev/expires-at and \`berth gc\` removes them then\n`,
      );
      return [];
    };
  type Named = { metadata?: { name?: string; annotations?: Record<string, string> } };
  const pods = (await cluster.listPods(selector).catch(listed<Named>('pods'))).filter((p) => !p.metadata?.annotations?.[ANNOTATION_KEPT_FAILED]);
  await Promise.all(pods.map((p) => cluster.deletePod(p.metadata!.name!).catch((err: Error) => leftBehind(`pod ${p.metadata!.name}`, err))));
  const services = await cluster.listServices(selector).catch(listed<Named>('services'));
  await Promise.all(services.map((s) => cluster.deleteService(s.metadata!.name!).catch((err: Error) => leftBehind(`service ${s.metadata!.name}`, err))));
  const claims = await cluster.listClaims(selector).catch(listed<Named>('claims'));
  await Promise.all(claims.map((s) => cluster.deleteClaim(s.metadata!.name!).catch((err: Error) => leftBehind(`claim ${s.metadata!.name}`, err))));
  const policies = await cluster.listNetworkPolicies(selector).catch(listed<Named>('networkpolicies'));
  await Promise.all(
    policies.map((p) => cluster.deleteNetworkPolicy(p.metadata!.name!).catch((err: Error) => leftBehind(`networkpolicy ${p.metadata!.name}`, err))),
  );
}
