import { useEffect, useState } from 'preact/hooks';

/**
 * The checked rows of the file list, by id. Shift-click (or Shift+arrow) checks the whole range
 * from the last row clicked, as file managers do. Ids no longer listed (moved, trashed) drop out
 * by themselves, and opening another folder clears the selection.
 */
export interface Selection {
  /** The checked ids still listed, in list order. */
  ids: string[];
  has(id: string): boolean;
  /** A click on row `index`'s checkbox; with `range`, every row from the anchor takes its new state. */
  toggle(index: number, range: boolean): void;
  /** Checks the rows from the anchor (or, without one, from row `current`) to `index`: Shift+arrow. */
  extendTo(index: number, current: number): void;
  setAll(on: boolean): void;
  /** Row `index` becomes where the next range starts (the arrows move it, as a click does). */
  anchorAt(index: number): void;
  /** Keeps only these ids checked (what a bulk action could not do). */
  keepOnly(ids: string[]): void;
  all: boolean;
  some: boolean;
}

export function useSelection(listed: string[], folderId: string): Selection {
  const [checked, setChecked] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<string | null>(null);
  useEffect(() => {
    setChecked(new Set());
    setAnchor(null);
  }, [folderId]);

  const ids = listed.filter((id) => checked.has(id));
  const between = (from: number, to: number) => listed.slice(Math.min(from, to), Math.max(from, to) + 1);

  const toggle = (index: number, range: boolean) => {
    const id = listed[index];
    const on = !checked.has(id);
    const from = anchor === null ? -1 : listed.indexOf(anchor);
    const next = new Set(checked);
    for (const each of range && from >= 0 ? between(from, index) : [id]) {
      if (on) next.add(each);
      else next.delete(each);
    }
    setChecked(next);
    setAnchor(id);
  };

  const extendTo = (index: number, current: number) => {
    let from = anchor === null ? -1 : listed.indexOf(anchor);
    if (from < 0) {
      from = current;
      setAnchor(listed[current]);
    }
    setChecked(new Set([...checked, ...between(from, index)]));
  };

  return {
    ids,
    has: (id) => checked.has(id),
    toggle,
    extendTo,
    setAll: (on) => {
      setChecked(on ? new Set(listed) : new Set());
      setAnchor(null);
    },
    anchorAt: (index) => setAnchor(listed[index] ?? null),
    keepOnly: (keep) => setChecked(new Set(keep)),
    all: listed.length > 0 && ids.length === listed.length,
    some: ids.length > 0,
  };
}
