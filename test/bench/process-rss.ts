// Resident memory of a process and all its descendants (node:cluster workers included), from /proc.
import { readdirSync, readFileSync } from 'node:fs';

function readStatus(pid: number): { ppid: number; rssKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    return { ppid, rssKb };
  } catch {
    return undefined; // the process exited while we were reading
  }
}

/** Sum of VmRSS in MiB over `pid` and every process below it. */
export function treeRssMiB(pid: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = readStatus(Number(entry));
    if (status === undefined) continue;
    rss.set(Number(entry), status.rssKb);
    const list = children.get(status.ppid) ?? [];
    list.push(Number(entry));
    children.set(status.ppid, list);
  }
  let totalKb = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const current = stack.pop() as number;
    totalKb += rss.get(current) ?? 0;
    stack.push(...(children.get(current) ?? []));
  }
  return totalKb / 1024;
}
