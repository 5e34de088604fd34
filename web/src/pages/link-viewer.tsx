import { storedPass } from '../link-download';
import type { SharedFile } from '../link-zip';
import { previewKind } from '../preview-kinds';
import { loadLinkPreview } from '../previews';
import { Viewer, type ViewerFile } from './viewer';

/** A file of a link as the viewer goes through it: a folder link's files have a hash name. */
export interface LinkFile extends ViewerFile {
  hashName?: string;
  size: number;
}

export interface LinkViewing {
  files: LinkFile[];
  start: number;
}

/** The viewer on a folder link's previewable files, from `file` on. */
export function folderViewing(files: SharedFile[], file: SharedFile): LinkViewing {
  const previewable = files
    .filter((f) => previewKind(f.name))
    .map((f) => ({ key: f.hashName, hashName: f.hashName, name: f.name, size: f.size }));
  return { files: previewable, start: previewable.findIndex((f) => f.key === file.hashName) };
}

/**
 * The viewer of a link page. A preview decrypts the file in this page from the sealed route, as a
 * download does, and counts the same: a file link's first preview or download in this tab spends
 * one access (`onSpent`; its pass covers the others), a folder link's files spend none.
 */
export function LinkViewer(props: {
  viewing: LinkViewing;
  link: { sharedHash: string; linkKey: string; password?: string };
  onSpent: () => void;
  onDownload: (file: LinkFile) => void;
  onClose: () => void;
}) {
  const { files } = props.viewing;
  const fileOf = (file: ViewerFile) => files.find((f) => f.key === file.key)!;
  const load = async (file: ViewerFile) => {
    const { hashName } = fileOf(file);
    const hadPass = !hashName && storedPass(props.link.sharedHash) !== null;
    const loaded = await loadLinkPreview({ ...props.link, hashName, name: file.name });
    if (!hashName && !hadPass) props.onSpent();
    return loaded;
  };
  return (
    <Viewer
      files={files}
      start={props.viewing.start}
      load={load}
      onDownload={(file) => props.onDownload(fileOf(file))}
      onClose={props.onClose}
    />
  );
}
