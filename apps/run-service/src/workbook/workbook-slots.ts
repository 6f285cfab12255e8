/**
 * At most `size` workbook parses at once on this replica (each holds a
 * worker thread with up to `RUN_WORKBOOK_MEMORY_MB` of heap); the others
 * wait in order until a slot frees or their deadline passes.
 */
export class WorkbookSlots {
  private busy = 0;
  private readonly waiting: Array<{ grant: () => void; timer: NodeJS.Timeout }> = [];

  constructor(private readonly size: number) {}

  /**
   * Waits for a slot.
   *
   * @param until epoch ms; past it the wait gives up
   * @returns the function that gives the slot back (call it once)
   * @throws Error when no slot freed before `until`
   */
  acquire(until: number): Promise<() => void> {
    if (this.busy < this.size) {
      this.busy += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          clearTimeout(entry.timer);
          resolve(this.releaser());
        },
        timer: setTimeout(
          () => {
            const index = this.waiting.indexOf(entry);
            if (index >= 0) this.waiting.splice(index, 1);
            reject(new Error('no workbook slot before the deadline'));
          },
          Math.max(0, until - Date.now()),
        ),
      };
      this.waiting.push(entry);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.busy -= 1;
      else next.grant();
    };
  }
}
