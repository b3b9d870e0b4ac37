// The part of pidusage's API that the bench uses (the package ships no types).
declare module 'pidusage' {
  interface Status {
    /** Milliseconds of CPU (user and system) the process has used since it started. */
    ctime: number;
    /** Resident memory in bytes. */
    memory: number;
    pid: number;
  }
  function pidusage(pid: number): Promise<Status>;
  /** A pid that is not running maps to null (or is left out). */
  function pidusage(pids: number[]): Promise<Record<string, Status | null | undefined>>;
  namespace pidusage {
    function clear(): void;
  }
  export default pidusage;
}
