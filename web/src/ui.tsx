import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { onLangChange, t } from './i18n';

/** Re-renders the caller when the language changes. */
export function useLang(): void {
  const [, set] = useState(0);
  useEffect(() => onLangChange(() => set((n) => n + 1)), []);
}

// ---- routing: the History API, every path served by the same index.html ----

const routeListeners = new Set<() => void>();
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const l of routeListeners) l();
}
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    routeListeners.add(update);
    addEventListener('popstate', update);
    return () => {
      routeListeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

export function Link(props: JSX.HTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return <a {...props} onClick={onClick} />;
}

// ---- modal dialogs: the native <dialog>, which traps focus and closes on Escape ----

export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean; id?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    // The control that opened the dialog gets the focus back when it closes (read before
    // showModal, which moves the focus into the dialog).
    const opener = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    return () => {
      // Closed first: while a modal dialog is open the rest of the page is inert and refuses focus.
      if (dialog.open) dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  const titleId = `${props.id ?? 'dialog'}-title`;
  return (
    <dialog
      ref={ref}
      class={props.wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={titleId}
      id={props.id}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <header class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="icon-button" onClick={props.onClose} aria-label={t('close')} title={t('close')}>
          ×
        </button>
      </header>
      <div class="dialog-body">{props.children}</div>
    </dialog>
  );
}

/** A confirmation dialog; resolves through the callbacks. */
export function Confirm(props: { message: string; confirmLabel: string; danger?: boolean; onConfirm: () => void; onCancel: () => void }) {
  return (
    <Dialog title={props.confirmLabel} onClose={props.onCancel} id="confirm">
      <p>{props.message}</p>
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          {t('cancel')}
        </button>
        <button type="button" class={props.danger ? 'danger' : 'primary'} onClick={props.onConfirm} autoFocus>
          {props.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

/** A one-field form dialog (new folder, rename). */
export function Prompt(props: {
  title: string;
  label: string;
  initial?: string;
  submitLabel: string;
  onSubmit: (value: string) => Promise<void>;
  onClose: () => void;
}) {
  const [value, setValue] = useState(props.initial ?? '');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const el = input.current!;
    el.focus();
    // Select the name without its extension, as file managers do.
    const dot = (props.initial ?? '').lastIndexOf('.');
    el.setSelectionRange(0, dot > 0 ? dot : el.value.length);
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!value.trim()) return;
    setBusy(true);
    setError('');
    try {
      await props.onSubmit(value.trim());
      props.onClose();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <Dialog title={props.title} onClose={props.onClose} id="prompt">
      <form onSubmit={submit}>
        <label class="field">
          <span>{props.label}</span>
          <input
            ref={input}
            name="value"
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            required
            maxLength={255}
            autoComplete="off"
          />
        </label>
        <Alert text={error} />
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            {t('cancel')}
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {props.submitLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

// ---- notices: a polite live region ----

export interface Notice {
  id: number;
  text: string;
  kind: 'info' | 'error';
  action?: { label: string; run: () => void };
}
let noticeId = 0;
const noticeListeners = new Set<(n: Notice[]) => void>();
let notices: Notice[] = [];
function publish() {
  for (const l of noticeListeners) l(notices);
}
export function notify(text: string, kind: Notice['kind'] = 'info', action?: Notice['action']): void {
  const notice = { id: ++noticeId, text, kind, action };
  notices = [...notices, notice].slice(-4);
  publish();
  setTimeout(() => dismiss(notice.id), kind === 'error' ? 10000 : 6000);
}
function dismiss(id: number) {
  notices = notices.filter((n) => n.id !== id);
  publish();
}
export function Notices() {
  const [list, setList] = useState<Notice[]>(notices);
  useEffect(() => {
    noticeListeners.add(setList);
    return () => noticeListeners.delete(setList);
  }, []);
  return (
    <div class="notices" role="status" aria-live="polite">
      {list.map((n) => (
        <div key={n.id} class={`notice ${n.kind}`}>
          <span>{n.text}</span>
          {n.action && (
            <button
              type="button"
              onClick={() => {
                n.action!.run();
                dismiss(n.id);
              }}
            >
              {n.action.label}
            </button>
          )}
          <button type="button" class="icon-button" aria-label={t('close')} onClick={() => dismiss(n.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** Copies `text` to the clipboard (or, where the Clipboard API is refused, from the selected `input`) and says so. */
export async function copyText(text: string, input?: HTMLInputElement | null): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    input?.select();
    document.execCommand('copy');
  }
  notify(t('copied'));
}

/** An error message announced to screen readers; nothing when `text` is empty. */
/** A read-only field holding a value shown once (a link, a password) and the button that copies it. */
export function CopyField(props: { id: string; value: string; label: string; buttonLabel: string }) {
  return (
    <div class="copy-row">
      <input id={props.id} readOnly value={props.value} aria-label={props.label} onFocus={(e) => e.currentTarget.select()} />
      <button type="button" class="primary" onClick={() => copyText(props.value, document.getElementById(props.id) as HTMLInputElement)}>
        {props.buttonLabel}
      </button>
    </div>
  );
}

export function Alert(props: { text: string }) {
  if (!props.text) return null;
  return (
    <p class="error" role="alert">
      {props.text}
    </p>
  );
}

const ICONS = {
  folder: 'M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  file: 'M6 2h8l5 5v13a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm7 1.5V8h4.5',
  lock: 'M7 10V7a5 5 0 0 1 10 0v3h1a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1V11a1 1 0 0 1 1-1zm2 0h6V7a3 3 0 0 0-6 0z',
  up: 'M12 5l-7 7h4v7h6v-7h4z',
} as const;

/** A decorative icon (SVG, no font needed), hidden from screen readers. */
export function Icon(props: { name: keyof typeof ICONS }) {
  return (
    <svg class={`icon icon-${props.name}`} viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      <path d={ICONS[props.name]} />
    </svg>
  );
}

/** A table head: column labels, some visually hidden, some with a class for narrow screens. */
export function TableHead(props: { columns: { label: string; class?: string; hidden?: boolean }[] }) {
  return (
    <thead>
      <tr>
        {props.columns.map((c) => (
          <th scope="col" class={c.class} key={c.label}>
            {c.hidden ? <span class="visually-hidden">{c.label}</span> : c.label}
          </th>
        ))}
      </tr>
    </thead>
  );
}
