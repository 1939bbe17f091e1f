// The process groups of the plugins a run started. Each plugin is started in
// a session of its own, so its group holds it and whatever it forks (an IPAM
// delegate, a helper): a deadline, an output cap, the run's end or a signal to
// the runner kills all of them at once, not only the plugin.

/** Whether a process group still has a member (kill with signal 0 tests without sending). */
function hasMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

export class PluginGroups {
  readonly #groups = new Set<number>();

  /** A plugin started as the leader of group `pgid` (its pid; none when the spawn itself failed). */
  add(pgid: number | undefined): void {
    if (pgid !== undefined) this.#groups.add(pgid);
  }

  /**
   * The leader has been reaped: forget the group once it is empty. A group
   * whose members live on (a delegate the killed plugin left) stays, to be
   * killed at the end; its id cannot be reused while a member lives (and
   * after that, only once pids have wrapped around, far longer than a run).
   */
  settle(pgid: number | undefined): void {
    if (pgid !== undefined && !hasMembers(pgid)) this.#groups.delete(pgid);
  }

  /** SIGKILL to one group; gone already is fine. */
  kill(pgid: number | undefined): void {
    if (pgid === undefined) return;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }

  /** SIGKILL to every group still known: at the run's end, or when it is aborted. */
  killAll(): void {
    for (const pgid of this.#groups) this.kill(pgid);
    this.#groups.clear();
  }
}
