import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * `serve --workers` (issue #16): a scrape reaches whichever worker the cluster hands it to, and
 * must still see the whole gateway. The worker asks the primary, which gathers every worker's
 * registry with prom-client's AggregatorRegistry (counters and histograms summed, the process
 * metrics by their own rules) and answers with the text.
 */
const REQUEST = 'junction:metrics-request';
const ANSWER = 'junction:metrics-answer';
/** A scrape waits this long for the primary; prom-client's own gather gives up after 5 s. */
const WAIT_MS = 6_000;

interface Answer {
  readonly type: typeof ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}
const isAnswer = (message: unknown): message is Answer => typeof message === 'object' && message !== null && (message as { type?: unknown }).type === ANSWER;

/** In a worker: the gateway's whole metrics through the primary; undefined outside a cluster. */
export function clusterScrape(registry: Registry): (() => Promise<string>) | undefined {
  if (!cluster.isWorker || !process.send) return undefined;
  // The primary's gather asks each worker for these registries (not prom-client's global one);
  // a worker answers only once an AggregatorRegistry was made in it (prom-client adds its
  // message listener then).
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry();
  let next = 0;
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const onMessage = (message: unknown): void => {
        if (!isAnswer(message) || message.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (message.text !== undefined) resolve(message.text);
        else reject(new Error(message.error ?? 'the primary did not gather the metrics'));
      };
      const timer = setTimeout(() => {
        process.off('message', onMessage);
        reject(new Error('the primary did not answer for the metrics'));
      }, WAIT_MS);
      timer.unref();
      process.on('message', onMessage);
      process.send?.({ type: REQUEST, id });
    });
}

/** In the primary: answers the workers' scrapes with every worker's metrics together. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== REQUEST) return;
    const id = (message as { id?: unknown }).id;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id, text }),
      (err: unknown) => worker.isConnected() && worker.send({ type: ANSWER, id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}
