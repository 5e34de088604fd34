import { useMemo, useRef } from 'preact/hooks';

/**
 * Orders a component's reloads. Answers can come back out of order (a listing asked before a rename
 * may arrive after the one asked after it; the details of a file no longer selected may arrive after
 * those of the file selected), and only the latest may set what the page shows.
 */
export function useLatest(): {
  /** Starts a load that supersedes every earlier one; the function returned tells whether it still is the latest. */
  start: () => () => boolean;
  /** Follows up the current load (its next page, say): the function returned tells whether no load started since. */
  follow: () => () => boolean;
} {
  const last = useRef(0);
  return useMemo(() => {
    const since = (mine: number) => () => mine === last.current;
    return { start: () => since(++last.current), follow: () => since(last.current) };
  }, []);
}
