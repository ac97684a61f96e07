import type { Entity } from '../http/entity.ts';
import type { Request, Response } from '../http/message.ts';
import type { Logger } from '../logging.ts';

/**
 * Disposes of a message's body (a spill file of the temporary storage); a plugin's own message
 * object may lack the method, or fail. Never rejects: a failure is logged. The promise, when there is
 * one, settles once the body is gone.
 */
export function disposeOf(
  message: Request | Response | undefined,
  logger: Logger,
): Promise<void> | undefined {
  const entity = message?.entity as Partial<Entity> | undefined;
  if (typeof entity?.dispose !== 'function') return undefined;
  const failed = (error: unknown) => logger.warn('a body could not be removed', { error: String(error) });
  try {
    return entity.dispose()?.catch(failed);
  } catch (error) {
    failed(error);
    return undefined;
  }
}
