import { useLayoutEffect, useRef } from 'preact/hooks';
import { t } from '../i18n';
import type { Item } from './items';

export interface RowAction {
  label: string;
  run: () => void;
  danger?: boolean;
}

/**
 * The "⋯" menu of a row, after the WAI-ARIA menu button pattern: the button opens a list of
 * actions with the first focused; arrows move (wrapping), Home and End go to the ends, Escape closes
 * it back onto the button, Tab closes it and moves on. Choosing an action gives the focus back to
 * the button first, so that a dialog the action opens returns it there when it closes.
 */
export function RowMenu(props: { item: Item; open: boolean; setOpen: (o: boolean) => void; actions: RowAction[] }) {
  const menu = useRef<HTMLUListElement>(null);
  // A layout effect: the first item has the focus as soon as the menu is shown, so that a key
  // pressed right after opening it (Tab, an arrow) already goes to the menu, not to its button.
  useLayoutEffect(() => {
    if (!props.open) return;
    menu.current?.querySelector<HTMLElement>('button')?.focus();
    const close = (e: MouseEvent) => {
      if (!menu.current?.parentElement?.contains(e.target as Node)) props.setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [props.open]);
  const menuButton = () => menu.current?.previousElementSibling as HTMLElement | null;
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    const buttons = Array.from(menu.current?.querySelectorAll<HTMLElement>('button') ?? []);
    const at = buttons.indexOf(document.activeElement as HTMLElement);
    const moves: Record<string, number> = {
      ArrowDown: (at + 1) % buttons.length,
      ArrowUp: (at - 1 + buttons.length) % buttons.length,
      Home: 0,
      End: buttons.length - 1,
    };
    if (e.key in moves) {
      e.preventDefault();
      buttons[moves[e.key]]?.focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      props.setOpen(false);
      menuButton()?.focus();
    } else if (e.key === 'Tab') {
      // The focus goes on from the button (the next control after it, or before it with Shift).
      menuButton()?.focus();
      props.setOpen(false);
    }
  };
  return (
    <div class="row-menu">
      <button
        type="button"
        class="icon-button"
        aria-haspopup="menu"
        aria-expanded={props.open}
        aria-label={t('actionsFor', { name: props.item.name })}
        title={t('actionsFor', { name: props.item.name })}
        onClick={(e) => {
          e.stopPropagation();
          props.setOpen(!props.open);
        }}
      >
        ⋯
      </button>
      {props.open && (
        <ul ref={menu} role="menu" class="menu" onKeyDown={onKeyDown}>
          {props.actions.map((a) => (
            <li role="none" key={a.label}>
              <button
                type="button"
                role="menuitem"
                tabIndex={-1}
                class={a.danger ? 'danger-text' : undefined}
                onClick={(e) => {
                  e.stopPropagation();
                  menuButton()?.focus();
                  props.setOpen(false);
                  a.run();
                }}
              >
                {a.label}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
