import { useEffect, useRef, useState } from 'preact/hooks';
import { useNarrow } from '../drawer';
import { formatDate, formatSize } from '../format';
import { t } from '../i18n';
import type { Item, SortKey } from './items';
import { RowMenu, type RowAction } from './row-menu';
import type { Selection } from './selection';
import { ItemPicture } from './thumbnail';

export interface Sort {
  by: SortKey;
  order: 'asc' | 'desc';
}

/**
 * The rows of a folder: a checkbox each (and one for all in the header), the name that opens, size,
 * date and the row menu. One row at a time is in the Tab order (the current one); the arrows move
 * it, Shift with them extends the selection.
 */
export function ItemsTable(props: {
  items: Item[];
  /** The current row, whose details show beside the list. */
  current: string | null;
  setCurrent: (id: string | null) => void;
  selection: Selection;
  sort: Sort;
  setSort: (sort: Sort) => void;
  open: (item: Item) => void;
  actionsFor: (item: Item) => RowAction[];
  onRename: (item: Item) => void;
  onTrash: (item: Item) => void;
  /** Backspace: to the parent folder, when there is one. */
  onUp?: () => void;
  /** Tiles with large thumbnails instead of rows (the same table, laid out by styles.css). */
  grid?: boolean;
}) {
  const { items, selection } = props;
  const [menuFor, setMenuFor] = useState<string | null>(null);
  const narrow = useNarrow();
  const tableRef = useRef<HTMLTableElement>(null);
  const allBox = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (allBox.current) allBox.current.indeterminate = selection.some && !selection.all;
  });
  const tabbable = Math.max(
    0,
    items.findIndex((i) => i.id === props.current),
  );

  const onKeyDown = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement;
    const index = Number(target.closest('tr')?.dataset.index ?? -1);
    const focusRow = (i: number) => {
      const rows = tableRef.current?.querySelectorAll<HTMLElement>('tbody .item-name');
      if (!rows || rows.length === 0) return;
      const at = Math.max(0, Math.min(rows.length - 1, i));
      rows[at].focus();
      props.setCurrent(rows[at].closest('tr')!.dataset.id!);
      if (e.shiftKey && index >= 0) selection.extendTo(at, index);
      else selection.anchorAt(at);
    };
    const key = e.key;
    if (key === 'ArrowDown' || key === 'ArrowUp') {
      e.preventDefault();
      focusRow(index + (key === 'ArrowDown' ? 1 : -1));
    } else if (key === 'Home' || key === 'End') {
      e.preventDefault();
      focusRow(key === 'Home' ? 0 : items.length - 1);
    } else if ((key === 'a' || key === 'A') && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      selection.setAll(true);
    } else if (key === 'Escape' && selection.some) {
      e.preventDefault();
      selection.setAll(false);
    } else if (key === 'Backspace' && props.onUp && target.tagName !== 'INPUT') {
      e.preventDefault();
      props.onUp();
    } else if (index >= 0 && key === 'F2') {
      e.preventDefault();
      props.onRename(items[index]);
    } else if (index >= 0 && key === 'Delete') {
      e.preventDefault();
      props.onTrash(items[index]);
    }
  };

  const sortHeader = (key: SortKey, label: string) => {
    const { sort } = props;
    const active = sort.by === key;
    return (
      <th scope="col" aria-sort={active ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none'} class={`col-${key}`}>
        <button
          type="button"
          class="sort"
          onClick={() => props.setSort({ by: key, order: active && sort.order === 'asc' ? 'desc' : 'asc' })}
          aria-label={t('sortBy', { column: label })}
        >
          {label} {active ? (sort.order === 'asc' ? '▲' : '▼') : ''}
        </button>
      </th>
    );
  };

  return (
    <table ref={tableRef} class={props.grid ? 'items grid' : 'items'} onKeyDown={onKeyDown} aria-describedby="keyboard-help">
      <thead>
        <tr>
          <th scope="col" class="col-check">
            <input
              ref={allBox}
              type="checkbox"
              class="select-all"
              aria-label={t('selectAll')}
              title={t('selectAll')}
              checked={selection.all}
              onClick={() => selection.setAll(!selection.all)}
            />
          </th>
          {sortHeader('name', t('colName'))}
          {sortHeader('size', t('colSize'))}
          {sortHeader('createdAt', t('colDate'))}
          <th scope="col" class="col-actions">
            <span class="visually-hidden">{t('colActions')}</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {items.map((item, index) => (
          <tr
            key={item.id}
            data-index={index}
            data-id={item.id}
            data-name={item.name}
            class={[props.current === item.id && 'selected', selection.has(item.id) && 'checked'].filter(Boolean).join(' ') || undefined}
            onClick={() => props.setCurrent(item.id)}
          >
            <td class="col-check">
              <input
                type="checkbox"
                class="row-check"
                aria-label={t('selectRow', { name: item.name })}
                tabIndex={index === tabbable ? 0 : -1}
                checked={selection.has(item.id)}
                onClick={(e) => {
                  // The checkbox chooses; it does not move the details panel.
                  e.stopPropagation();
                  selection.toggle(index, e.shiftKey);
                }}
              />
            </td>
            <td class="col-name">
              <button
                type="button"
                class="item-name"
                title={item.name}
                tabIndex={index === tabbable ? 0 : -1}
                onFocus={() => props.setCurrent(item.id)}
                onDblClick={() => props.open(item)}
                onClick={(e) => {
                  // A folder opens on click, as links do; a file is selected (Enter or double-click downloads).
                  if (item.kind === 'folder') props.open(item);
                  else if ((e as MouseEvent).detail === 0) props.open(item);
                }}
              >
                <ItemPicture item={item} />
                <span class="visually-hidden">{item.kind === 'folder' ? t('folder') : ''} </span>
                <span class="name-text">{item.name}</span>
              </button>
              {/* On a phone the size and date columns make way for the name: they are shown under it. */}
              {narrow && (
                <span class="item-meta">
                  {item.kind === 'file' && `${formatSize(item.size ?? 0)} · `}
                  {formatDate(item.date)}
                </span>
              )}
            </td>
            <td class="col-size">{item.kind === 'file' ? formatSize(item.size ?? 0) : '—'}</td>
            <td class="col-createdAt">{formatDate(item.date)}</td>
            <td class="col-actions">
              <RowMenu
                item={item}
                open={menuFor === item.id}
                setOpen={(o) => setMenuFor(o ? item.id : null)}
                actions={props.actionsFor(item)}
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
