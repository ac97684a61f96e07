import type { Cluster, Worker } from 'node:cluster';
import type { Logger } from '@portico/gateway-core';
import { loadPromClient, type MetricJson, type ServerMetrics } from './metrics.ts';

/**
 * With `--workers N`, one scrape sees the whole instance: the worker the scrape reached asks the
 * primary, which asks every worker whose metrics are ready for its own (prom-client's JSON), sums
 * them by series (prom-client's `AggregatorRegistry.aggregate`) and answers with the text.
 *
 * The messages, all on node:cluster's IPC channel:
 * worker → primary `portico:metrics-ready` (this worker's metrics can be asked for);
 * worker → primary `portico:metrics-scrape` {id} and primary → worker `portico:metrics-scraped` {id, text | error};
 * primary → worker `portico:metrics-collect` {id} and worker → primary `portico:metrics-collected` {id, metrics}.
 */

type Json = MetricJson[];

/** How long the primary waits for a worker's metrics; one that does not answer is left out. */
const WORKER_ANSWER_MS = 2000;
/** How long a worker waits for the primary's answer before the scrape fails (503). */
const PRIMARY_ANSWER_MS = 5000;

interface Message {
  type?: string;
  id?: number;
  text?: string;
  error?: string;
  metrics?: Json;
}

/**
 * In a worker: answers the primary's requests for this worker's metrics, tells the primary they are
 * ready, and returns the scrape that asks the primary for the whole instance's.
 */
export function clusterWorkerScrape(metrics: ServerMetrics): { scrape(): Promise<string>; close(): void } {
  let next = 0;
  const waiting = new Map<number, { resolve(text: string): void; reject(error: Error): void }>();
  const onMessage = (message: Message) => {
    if (message?.type === 'portico:metrics-collect') {
      void metrics.json().then(
        (json) => send({ type: 'portico:metrics-collected', id: message.id, metrics: json }),
        (error: unknown) => send({ type: 'portico:metrics-collected', id: message.id, error: String(error) }),
      );
    } else if (message?.type === 'portico:metrics-scraped' && message.id !== undefined) {
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.text !== undefined) pending?.resolve(message.text);
      else pending?.reject(new Error(message.error ?? 'the primary process sent no metrics'));
    }
  };
  process.on('message', onMessage);
  send({ type: 'portico:metrics-ready' });
  return {
    scrape: () =>
      new Promise<string>((resolve, reject) => {
        const id = next++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error('the primary process did not answer with the workers’ metrics'));
        }, PRIMARY_ANSWER_MS);
        waiting.set(id, {
          resolve: (text) => {
            clearTimeout(timer);
            resolve(text);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        send({ type: 'portico:metrics-scrape', id });
      }),
    close: () => {
      process.off('message', onMessage);
    },
  };
}

function send(message: Message): void {
  if (process.connected) process.send?.(message);
}

/** In the primary: answers the workers' scrapes with the sum of every ready worker's metrics. */
export function serveClusterMetrics(cluster: Cluster, logger: Logger): void {
  const ready = new Set<Worker>();
  let next = 0;
  const collecting = new Map<number, (metrics: Json | undefined) => void>();
  cluster.on('exit', (worker) => ready.delete(worker));
  cluster.on('message', (worker: Worker, message: Message) => {
    if (message?.type === 'portico:metrics-ready') ready.add(worker);
    else if (message?.type === 'portico:metrics-collected' && message.id !== undefined) {
      collecting.get(message.id)?.(message.metrics);
    } else if (message?.type === 'portico:metrics-scrape') {
      aggregate().then(
        (text) => reply(worker, { type: 'portico:metrics-scraped', id: message.id, text }),
        (error: unknown) => {
          logger.error('the workers’ metrics could not be aggregated', { error: String(error) });
          reply(worker, { type: 'portico:metrics-scraped', id: message.id, error: String(error) });
        },
      );
    }
  });
  /** One worker's metrics, or undefined when it does not answer in time. */
  const collect = (worker: Worker): Promise<Json | undefined> =>
    new Promise((resolve) => {
      const id = next++;
      const timer = setTimeout(() => done(undefined), WORKER_ANSWER_MS);
      const done = (metrics: Json | undefined) => {
        clearTimeout(timer);
        collecting.delete(id);
        resolve(metrics);
      };
      collecting.set(id, done);
      reply(worker, { type: 'portico:metrics-collect', id });
    });
  const aggregate = async (): Promise<string> => {
    const { AggregatorRegistry } = await loadPromClient();
    const answers = await Promise.all([...ready].filter((w) => w.isConnected()).map(collect));
    const found = answers.filter((metrics): metrics is Json => metrics !== undefined);
    if (answers.length > found.length)
      logger.warn('a worker did not send its metrics in time: left out of this scrape', {
        asked: answers.length,
        answered: found.length,
      });
    return AggregatorRegistry.aggregate(found as never).metrics();
  };
}

function reply(worker: Worker, message: Message): void {
  if (worker.isConnected()) worker.send(message);
}
