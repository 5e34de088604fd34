import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api';
import { formatDate } from './format';
import { errorText, t } from './i18n';
import { revealFile } from './pages/files';
import { fileItem, folderItem } from './pages/items';
import { ItemPicture } from './pages/thumbnail';
import { navigate } from './ui';

/** A result of GET /api/search. */
interface SearchResult {
  kind: 'file' | 'folder';
  id: string;
  name: string;
  path: string;
  folderId: string;
  contentType: string | null;
  updatedAt: string;
  owner: { userId: string; name: string } | null;
}

/** The API searches from this many characters (a trigram index cannot answer less). */
const MIN_LENGTH = 3;
/** Typing pauses this long before a search is sent. */
const DEBOUNCE_MS = 200;
const LIMIT = 20;

/**
 * The search box of the header: names across every bucket and everything shared, as you type
 * (WAI-ARIA combobox: ↑ ↓ move through the results, Enter opens one, Escape closes them).
 */
export function SearchBox() {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<SearchResult[] | null>(null);
  const [active, setActive] = useState(-1);
  const [error, setError] = useState('');
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const text = query.trim();

  useEffect(() => {
    setActive(-1);
    if (text.length < MIN_LENGTH) return setResults(null);
    const controller = new AbortController();
    const timer = setTimeout(() => {
      call('GET', '/search', { query: { q: text, limit: LIMIT }, signal: controller.signal })
        .then((page) => (setResults(page.data), setError('')))
        .catch((e) => controller.signal.aborted || setError(errorText(e)));
    }, DEBOUNCE_MS);
    return () => (clearTimeout(timer), controller.abort());
  }, [text]);

  const choose = (result: SearchResult) => {
    setOpen(false);
    setQuery('');
    if (result.kind === 'folder') navigate(`/files/${result.id}`);
    else if (result.folderId) revealFile(result.folderId, result.id);
    else navigate('/shared');
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const count = results?.length ?? 0;
    if (e.key === 'ArrowDown' && count > 0) setActive((active + 1) % count);
    else if (e.key === 'ArrowUp' && count > 0) setActive((active - 1 + count) % count);
    else if (e.key === 'Enter' && results && active >= 0) choose(results[active]);
    else if (e.key === 'Escape') setOpen(false);
    else return;
    e.preventDefault();
    setOpen(e.key !== 'Escape' && e.key !== 'Enter');
  };

  const showing = open && text.length > 0;
  return (
    <div class="search-box" role="search" ref={box} onFocusOut={(e) => box.current?.contains(e.relatedTarget as Node) || setOpen(false)}>
      <input
        type="search"
        role="combobox"
        aria-label={t('searchLabel')}
        placeholder={t('searchPlaceholder')}
        aria-expanded={showing && !!results}
        aria-controls="search-results"
        aria-autocomplete="list"
        aria-activedescendant={active >= 0 ? `search-result-${active}` : undefined}
        value={query}
        onInput={(e) => (setQuery(e.currentTarget.value), setOpen(true))}
        onFocus={() => setOpen(true)}
        onKeyDown={onKeyDown}
      />
      {showing && (
        <div class="search-popup">
          {text.length < MIN_LENGTH && <p class="hint">{t('searchTooShort', { count: MIN_LENGTH })}</p>}
          {error && <p class="error">{error}</p>}
          {results && results.length === 0 && <p class="hint">{t('searchNothing', { query: text })}</p>}
          <ul id="search-results" role="listbox" aria-label={t('searchResults')} hidden={!results?.length}>
            {results?.map((r, index) => (
              <li
                key={r.id}
                id={`search-result-${index}`}
                role="option"
                aria-selected={index === active}
                class={index === active ? 'active' : undefined}
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => choose(r)}
              >
                <ItemPicture item={r.kind === 'folder' ? folderItem(r) : fileItem(r)} /> <span class="search-name">{r.name}</span>
                <span class="search-where">
                  {r.path}
                  {r.owner ? ` · ${t('sharedBy', { name: r.owner.name })}` : ''} · {formatDate(r.updatedAt)}
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
