export { Duration, parseDuration } from './duration.ts';
