import { redisClientArguments } from '@portico/gateway-core/redis';
import { Redis, type RedisOptions } from 'ioredis';

/** One Redis connection, shared by every filter of this process that names the same server. */
export interface SharedRedis {
  readonly client: Redis;
  /** Gives the connection back; the last user closes it. */
  release(): Promise<void>;
}

interface Entry {
  client: Redis;
  users: number;
  ready: Promise<void>;
}

const connections = new Map<string, Entry>();

/** How long a filter being created waits for the first connection before serving anyway. */
const FIRST_CONNECTION_WAIT_MS = 2000;

/**
 * A connection to `uri` whose commands fail at once while Redis is unreachable (no offline queue, no
 * retry) and give up after `timeoutMs`, so that requests never wait for an outage to end. It
 * reconnects by itself. The filters report outages, so connection errors are not logged here.
 */
export async function acquireRedis(uri: string, timeoutMs: number): Promise<SharedRedis> {
  const id = `${uri} ${timeoutMs}`;
  let entry = connections.get(id);
  if (entry === undefined) {
    const target = redisClientArguments(uri);
    const options: RedisOptions = {
      ...target.options,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectionName: 'portico-throttling',
    };
    // Through Sentinel, the client asks the Sentinels for the group's primary and follows failovers.
    const client = target.uri === undefined ? new Redis(options) : new Redis(target.uri, options);
    client.on('error', () => {});
    const created: Entry = { client, users: 0, ready: firstConnection(client) };
    connections.set(id, created);
    entry = created;
  }
  entry.users++;
  await entry.ready;
  const owned = entry;
  let released = false;
  return {
    client: owned.client,
    async release() {
      if (released) return;
      released = true;
      if (--owned.users > 0) return;
      connections.delete(id);
      await owned.client.quit().catch(() => owned.client.disconnect());
    },
  };
}

/** Resolves when the client is ready, fails to connect, or after a short wait, whichever is first. */
function firstConnection(client: Redis): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      client.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, FIRST_CONNECTION_WAIT_MS);
    client.once('ready', done);
    client.once('error', done);
  });
}
