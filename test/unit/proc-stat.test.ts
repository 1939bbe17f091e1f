// /proc/<pid>/stat read past the command name, which may itself hold spaces
// and parentheses (a process may name itself anything, e.g. "a) (b"): the
// fields that owner checks, signal forwarding and the lab's waits read.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { procStatFields } from '../../dist/core/proc-stat.js';

describe('procStatFields', () => {
  it("counts fields after the command name's last parenthesis", async () => {
    // The shell renames itself, then waits on its stdin.
    const child = spawn('bash', ['-c', 'printf "a) 1 (b" > /proc/$$/comm; echo named; read'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await once(child.stdout!, 'data');
    try {
      const fields = procStatFields(child.pid!)!;
      expect(fields[0]).toMatch(/^[SR]$/); // state: waiting on its stdin
      expect(Number(fields[1])).toBe(process.pid); // field 4, the parent
      expect(fields[2]).toMatch(/^\d+$/); // the process group
      expect(fields[19]).toMatch(/^\d+$/); // the start time
      expect(fields).toHaveLength(50); // fields 3 to 52 (Linux 3.5 on)
    } finally {
      child.stdin!.end();
      await once(child, 'exit');
    }
  });

  it("reads this process's own as 'self', and nothing for a process gone", async () => {
    expect(procStatFields('self')![1]).toBe(String(process.ppid));
    const child = spawn('true');
    await once(child, 'exit');
    expect(procStatFields(child.pid!)).toBeUndefined();
  });
});
