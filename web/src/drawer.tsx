import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from './i18n';

/** Phone widths: the same breakpoint as the `max-width: 640px` rules of styles.css. */
const NARROW = '(max-width: 640px)';

/** Whether the window is phone-narrow, following its resizing. */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const query = matchMedia(NARROW);
    const update = () => setNarrow(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return narrow;
}

export interface DrawerState {
  narrow: boolean;
  open: boolean;
  show: () => void;
  /** Closes the drawer; with `refocus`, the focus goes back to the menu button. */
  close: (refocus: boolean) => void;
  button: RefObject<HTMLButtonElement>;
  panel: RefObject<HTMLDivElement>;
}

/**
 * The navigation as an off-canvas drawer on a phone: opened, the focus goes to its current link;
 * Escape, a click outside or a choice in it (the page changes) close it with the focus back on the
 * menu button. It closes by itself when the window grows out of phone width.
 */
export function useDrawer(path: string): DrawerState {
  const narrow = useNarrow();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  useEffect(() => {
    if (!open) return;
    const drawer = panel.current;
    (drawer?.querySelector<HTMLElement>('a[aria-current="page"]') ?? drawer?.querySelector<HTMLElement>('a'))?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented) close(true);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);
  useEffect(() => {
    if (open) close(narrow);
  }, [path, narrow]);
  return { narrow, open, show: () => setOpen(true), close, button, panel };
}

/** The button of the topbar that opens the drawer (on a phone only). */
export function MenuButton(props: { drawer: DrawerState }) {
  const { drawer } = props;
  if (!drawer.narrow) return null;
  return (
    <button
      ref={drawer.button}
      type="button"
      class="icon-button menu-button"
      aria-expanded={drawer.open}
      aria-controls="drawer"
      aria-label={t('menu')}
      title={t('menu')}
      onClick={() => (drawer.open ? drawer.close(true) : drawer.show())}
    >
      ☰
    </button>
  );
}

/**
 * What the drawer holds: on a wide window, the sidebar as it is (the wrapper takes no room); on a
 * phone, a panel sliding in from the left over a backdrop that closes it. Tabbing out of the panel
 * closes it too, so that it never hides the control that has the focus.
 */
export function DrawerPanel(props: { drawer: DrawerState; children: ComponentChildren }) {
  const { drawer } = props;
  const classes = ['drawer', drawer.narrow && 'phone', drawer.open && 'open'].filter(Boolean).join(' ');
  return (
    <>
      {drawer.open && <div class="drawer-backdrop" onClick={() => drawer.close(true)} />}
      <div
        ref={drawer.panel}
        id="drawer"
        class={classes}
        onFocusOut={(e) => {
          const to = e.relatedTarget as Node | null;
          if (drawer.open && to && !drawer.panel.current?.contains(to) && to !== drawer.button.current) drawer.close(false);
        }}
      >
        {props.children}
      </div>
    </>
  );
}
