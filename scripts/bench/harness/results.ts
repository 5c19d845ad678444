// What every part of the benchmark hands to the report: tables of summaries, checks and targets.

/** Median, min and max over the runs; every figure of the report is one of these. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarize(values: number[]): Summary | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, runs: values.length };
}

/** Per-run ratios a[i] / b[i]: each ratio compares two measurements taken back to back. */
export function ratios(a: number[], b: number[]): number[] {
  return a.flatMap((value, i) => (b[i] === undefined || b[i] === 0 ? [] : [value / b[i]!]));
}

export type Status = "ok" | "not installed" | "failed";

export type Cell = Summary | string | undefined;

export interface Row {
  label: string;
  status: Status;
  /** Column name -> figure. */
  cells: Record<string, Cell>;
  command?: string;
  version?: string;
  /** Why it failed, or how it was measured when that differs from the table's rule. */
  note?: string;
}

export interface Table {
  title: string;
  columns: string[];
  rows: Row[];
  /** How to read the table: what each figure is and how it was measured. */
  notes: string[];
}

export interface Check {
  label: string;
  passed: boolean;
  detail: string;
}

export interface Target {
  label: string;
  goal: string;
  measured: string;
  /** undefined: not measured (tool missing or failed); null: the issue sets no number to meet. */
  met: boolean | null | undefined;
}

/** Measurements over time for a chart: RSS and pages/s against pages crawled (sections/jobs.ts). */
export interface Series {
  label: string;
  points: { seconds: number; pages: number; rssMB: number; pagesPerSecond: number }[];
}

export interface SectionResult {
  id: "password" | "crawl" | "crawl-cli" | "startup" | "quota" | "admission" | "jobs" | "sites" | "politeness" | "link-report" | "render";
  title: string;
  tables: Table[];
  checks: Check[];
  targets: Target[];
  /** A section that could not run at all. */
  error?: string;
  /** Samples over time, for charts. */
  series?: Series[];
  seconds: number;
  /** Not measured in this run: taken from an earlier run's results (run.ts --carry). */
  carried?: { startedAt: string; runs: number; loadBefore: number; loadAfter: number };
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  kernel: string;
  memoryGiB: number;
  bun: string;
  genapi: string;
  /** 1-minute load average when the run started and ended: other work on a shared machine. */
  loadBefore: number;
  loadAfter: number;
}

export interface BenchResults {
  mode: "full" | "smoke";
  startedAt: string;
  seconds: number;
  runs: number;
  machine: Machine;
  tools: Row[];
  sections: SectionResult[];
  /** The charts the report shows (files beside it), so that a run carrying a section keeps its charts. */
  charts?: { section: SectionResult["id"]; path: string; title: string }[];
}

export function row(label: string, cells: Record<string, Cell>, extra: Partial<Row> = {}): Row {
  return { label, status: "ok", cells, ...extra };
}

export function missing(label: string, status: Exclude<Status, "ok">, note: string, extra: Partial<Row> = {}): Row {
  return { label, status, cells: {}, note, ...extra };
}
