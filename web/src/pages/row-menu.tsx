import { useEffect, useRef } from 'preact/hooks';
import { t } from '../i18n';
import type { Item } from './items';

export interface RowAction {
  label: string;
  run: () => void;
  danger?: boolean;
}

/** The "⋯" menu of a row: a button that opens a list of actions; Escape closes it. */
export function RowMenu(props: { item: Item; open: boolean; setOpen: (o: boolean) => void; actions: RowAction[] }) {
  const menu = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (!props.open) return;
    menu.current?.querySelector<HTMLElement>('button')?.focus();
    const close = (e: MouseEvent) => {
      if (!menu.current?.parentElement?.contains(e.target as Node)) props.setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [props.open]);
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    const buttons = Array.from(menu.current?.querySelectorAll<HTMLElement>('button') ?? []);
    const at = buttons.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') {
      e.preventDefault();
      props.setOpen(false);
      (menu.current?.previousElementSibling as HTMLElement | null)?.focus();
    } else if (e.key === 'ArrowDown') {
      e.preventDefault();
      buttons[(at + 1) % buttons.length]?.focus();
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      buttons[(at - 1 + buttons.length) % buttons.length]?.focus();
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
                class={a.danger ? 'danger-text' : undefined}
                onClick={(e) => {
                  e.stopPropagation();
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
