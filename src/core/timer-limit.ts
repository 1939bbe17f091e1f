// Node fires a timer of more than 2^31-1 ms (about 24.8 days) after 1 ms, with
// only a warning: a timeout or delay given beyond it would act at once. Every
// duration the package takes is bounded by it.
export const MAX_TIMER_MS = 2 ** 31 - 1;
