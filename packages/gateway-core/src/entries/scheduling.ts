/**
 * `@portico/gateway-core/scheduling`: for a plugin whose objects run background work (a cleaning
 * pass, a cache sweep, a refresh) on the ScheduledExecutorService its `executor` setting names.
 */
export {
  executorSetting,
  resolveExecutor,
  type Scheduled,
  type ScheduledExecutor,
  type ScheduledTask,
} from '../builtins/scheduled-executor.ts';
