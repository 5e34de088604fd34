import { useEffect, useState } from 'preact/hooks';
import { call } from './api';

/** The addresses the server hands out (its welcome, GET /api): links and public files start with `publicUrl`. */
export interface ServerAddresses {
  publicUrl: string;
  webdav: string;
}

let asked: Promise<ServerAddresses> | null = null;

/** The page's own origin: what the server would answer without COFFRE_PUBLIC_URL. */
function pageAddresses(): ServerAddresses {
  return { publicUrl: location.origin, webdav: `${location.origin}/dav/` };
}

/** The server's addresses, asked once per page load (COFFRE_PUBLIC_URL may differ from the page's origin). */
export function serverAddresses(): Promise<ServerAddresses> {
  asked ??= call<ServerAddresses>('GET', '', { anonymous: true }).catch(() => {
    asked = null;
    return pageAddresses();
  });
  return asked;
}

/** The server's addresses for a component: the page's origin until the server has answered. */
export function useServerAddresses(): ServerAddresses {
  const [addresses, setAddresses] = useState(pageAddresses);
  useEffect(() => {
    let live = true;
    serverAddresses().then((answer) => live && setAddresses(answer));
    return () => {
      live = false;
    };
  }, []);
  return addresses;
}
