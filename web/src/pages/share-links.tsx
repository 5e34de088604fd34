import { useState } from 'preact/hooks';
import { useServerAddresses } from '../addresses';
import { api } from '../api';
import { formatDate } from '../format';
import { errorText, t } from '../i18n';
import { Confirm, CopyField, Icon, copyText, notify } from '../ui';
import type { Item } from './items';
import { LinkForm, choicesOf, daysUntil, newLinkChoices, type LinkChoices } from './link-form';

/** A link as the API lists it (without its key). */
export interface LinkSummary {
  sharedHash: string;
  expiresAt: string | null;
  maxAccess: number;
  accessCount: number;
  hasPassword: boolean;
  canDownload: boolean;
  isPublic: boolean;
}

/** The links part of the share dialog: the new link's address, each link's copy, edit and revoke, and a new one. */
export function LinksSection(props: { item: Item; links: LinkSummary[]; reload: () => Promise<void>; onChanged: () => void }) {
  const { item, links } = props;
  const base = item.kind === 'file' ? '/files' : '/folders';
  const [created, setCreated] = useState<{ link: string; password: string } | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  // A new key per link made: the form starts again from the defaults.
  const [formKey, setFormKey] = useState(0);

  const createLink = async (choices: LinkChoices) => {
    const link = await api.post(`${base}/share/${item.id}`, {
      ...(choices.password ? { password: choices.password } : {}),
      expirationDays: daysUntil(choices.expiresOn),
      maxAccess: choices.maxAccess,
      canView: true,
      canDownload: choices.canDownload,
      canEdit: false,
      isPublic: choices.isPublic,
    });
    setCreated({ link: link.shareLink, password: choices.password });
    setFormKey(formKey + 1);
    notify(t('linkMade'));
    await props.reload();
    props.onChanged();
  };

  const revoke = async (hash: string) => {
    setRevoking(null);
    try {
      await api.del(`${base}/revoke/${hash}`);
      notify(t('linkRevokedNotice'));
      await props.reload();
    } catch (err) {
      notify(errorText(err), 'error');
    }
  };

  return (
    <section aria-labelledby="links-title" class="share-section">
      <h3 id="links-title">{t('shareLinks')}</h3>
      <LocalAddressWarning link={created?.link ?? null} />
      {created && (
        <div class="created-link" role="status">
          <p>{t('linkCreated')}</p>
          <CopyField id="created-link" value={created.link} label={t('shareLinks')} buttonLabel={t('copyLink')} />
          {created.password && (
            <>
              <p class="hint">{t('linkPasswordSeparately')}</p>
              <CopyField id="created-link-password" value={created.password} label={t('linkPassword')} buttonLabel={t('copyPassword')} />
            </>
          )}
        </div>
      )}
      {links.length === 0 ? (
        <p class="muted">{t('noLinks')}</p>
      ) : (
        <ul class="link-list">
          {links.map((l) => (
            <LinkRow
              key={l.sharedHash}
              base={base}
              kind={item.kind}
              link={l}
              editing={editing === l.sharedHash}
              onEdit={() => setEditing(editing === l.sharedHash ? null : l.sharedHash)}
              onEdited={() => (setEditing(null), props.reload())}
              onRevoke={() => setRevoking(l.sharedHash)}
            />
          ))}
        </ul>
      )}
      <h4>{t('newLink')}</h4>
      <LinkForm
        key={formKey}
        id="new-link"
        initial={newLinkChoices()}
        kind={item.kind}
        isNew
        submitLabel={t('createLink')}
        onSubmit={createLink}
      />
      {revoking && (
        <Confirm
          message={t('confirmRevoke')}
          confirmLabel={t('revoke')}
          danger
          onCancel={() => setRevoking(null)}
          onConfirm={() => revoke(revoking)}
        />
      )}
    </section>
  );
}

/** One link: what it allows, its address copied again on demand, its settings, its revocation. */
function LinkRow(props: {
  base: string;
  kind: 'file' | 'folder';
  link: LinkSummary;
  editing: boolean;
  onEdit: () => void;
  onEdited: () => void;
  onRevoke: () => void;
}) {
  const { link, base } = props;
  const [address, setAddress] = useState<string | null>(null);
  const fieldId = `link-${link.sharedHash}`;

  const copyAgain = async () => {
    try {
      const { shareLink } = await api.get(`${base}/share/${link.sharedHash}/address`);
      setAddress(shareLink);
      // After the field is drawn, so that a browser without the Clipboard API copies from it.
      setTimeout(() => copyText(shareLink, document.getElementById(fieldId) as HTMLInputElement | null));
    } catch (err) {
      notify(errorText(err), 'error');
    }
  };

  const save = async (choices: LinkChoices) => {
    const before = choicesOf(link);
    const changes = {
      ...(choices.expiresOn !== before.expiresOn ? { expirationDays: daysUntil(choices.expiresOn) } : {}),
      ...(choices.maxAccess !== before.maxAccess ? { maxAccess: choices.maxAccess } : {}),
      ...(choices.canDownload !== before.canDownload ? { canDownload: choices.canDownload } : {}),
      ...(choices.removePassword ? { password: '' } : choices.password ? { password: choices.password } : {}),
    };
    if (Object.keys(changes).length > 0) {
      await api.patch(`${base}/share/${link.sharedHash}`, changes);
      notify(t('saved'));
    }
    props.onEdited();
  };

  return (
    <li data-link={link.sharedHash}>
      <div class="link-summary">
        <code>…/s/{link.sharedHash.slice(0, 8)}…</code>{' '}
        <span>
          {link.maxAccess ? t('usesOf', { count: link.accessCount, max: link.maxAccess }) : t('uses', { count: link.accessCount })}
        </span>
        {' · '}
        <span>{link.expiresAt ? t('expires', { date: formatDate(link.expiresAt) }) : t('never')}</span>
        {link.hasPassword && (
          <span>
            {' · '}
            <Icon name="lock" /> {t('withPassword')}
          </span>
        )}
        {!link.canDownload && <span> · {t('viewOnly')}</span>}
      </div>
      <div class="link-actions">
        <button type="button" onClick={copyAgain}>
          {t('copyLink')}
        </button>
        <button type="button" onClick={props.onEdit} aria-expanded={props.editing}>
          {t('edit')}
        </button>
        <button type="button" class="danger-text" onClick={props.onRevoke}>
          {t('revoke')}
        </button>
      </div>
      {address && <CopyField id={fieldId} value={address} label={t('shareLinks')} buttonLabel={t('copyLink')} />}
      {props.editing && (
        <LinkForm
          id={`edit-${link.sharedHash}`}
          initial={choicesOf(link)}
          kind={props.kind}
          isNew={false}
          hasPassword={link.hasPassword}
          submitLabel={t('save')}
          onSubmit={save}
        />
      )}
    </li>
  );
}

/** Whether a host name reaches only the machine it is typed on. */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\./.test(hostname) || hostname === '[::1]';
}

/**
 * Says so when links start with an address only this computer can open: the new link's, or the
 * server's before one is made (COFFRE_PUBLIC_URL, or else the address the page reached it by).
 */
function LocalAddressWarning(props: { link: string | null }) {
  const { publicUrl } = useServerAddresses();
  const url = new URL(props.link ?? publicUrl);
  if (!isLoopback(url.hostname)) return null;
  return (
    <p class="warning" data-testid="local-address-warning">
      {t('localAddressWarning', { origin: url.origin })}
    </p>
  );
}
