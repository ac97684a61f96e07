import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

/** What the application saw of one login attempt (never the password itself). */
export interface LoginAttempt {
  username: string;
  /** The form's CSRF token was the one the session's login page carried. */
  csrfValid: boolean;
  succeeded: boolean;
}

export interface FormLoginApp {
  url: string;
  /** Every POST /login, in order. */
  logins: LoginAttempt[];
  /** Every other request: its path and headers, in order. */
  pages: { method: string; path: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** Marks every login page this application serves, for `loginPageContentMarker`. */
export const LOGIN_PAGE_MARKER = 'Please sign in';

interface Session {
  csrf: string | undefined;
  user: string | undefined;
}

/**
 * A small application with its own form login, as the ones PasswordReplayFilter logs users in to.
 * Its session is a cookie (`APPSID`) naming a session kept in memory. GET /login serves the login
 * page, with a CSRF token bound to the session in a hidden field; POST /login accepts a form whose
 * username and password are among `users` and whose token is the session's, and marks the session
 * logged in. Every other path is a protected page: the page when the session is logged in, else the
 * login page itself (200), as many applications answer.
 */
export async function startFormLoginApp(users: Record<string, string>): Promise<FormLoginApp> {
  const sessions = new Map<string, Session>();
  const logins: LoginAttempt[] = [];
  const pages: FormLoginApp['pages'] = [];
  const app = new Koa();

  const sessionOf = (ctx: Koa.Context): Session => {
    const known = sessions.get(ctx.cookies.get('APPSID') ?? '');
    if (known) return known;
    const id = randomBytes(16).toString('hex');
    const session: Session = { csrf: undefined, user: undefined };
    sessions.set(id, session);
    ctx.cookies.set('APPSID', id, { httpOnly: true, path: '/' });
    return session;
  };

  const loginPage = (ctx: Koa.Context, session: Session, status = 200) => {
    session.csrf = randomBytes(12).toString('hex');
    ctx.status = status;
    ctx.type = 'text/html';
    ctx.body = [
      `<html><body><h1>${LOGIN_PAGE_MARKER}</h1>`,
      '<form method="post" action="/login">',
      `  <input type="hidden" name="csrf" value="${session.csrf}">`,
      '  <input name="username"> <input type="password" name="password">',
      '</form></body></html>',
    ].join('\n');
  };

  app.use(async (ctx) => {
    const session = sessionOf(ctx);
    if (ctx.path === '/login' && ctx.method === 'POST') {
      const form = new URLSearchParams(await bodyOf(ctx.req));
      const username = form.get('username') ?? '';
      const csrfValid = session.csrf !== undefined && form.get('csrf') === session.csrf;
      const succeeded =
        csrfValid && users[username] !== undefined && users[username] === form.get('password');
      logins.push({ username, csrfValid, succeeded });
      if (!succeeded) return loginPage(ctx, session, 401);
      session.user = username;
      session.csrf = undefined;
      ctx.type = 'text/plain';
      ctx.body = `Welcome, ${username}`;
      return;
    }
    pages.push({ method: ctx.method, path: ctx.path, headers: ctx.headers });
    if (ctx.path === '/login' || session.user === undefined) return loginPage(ctx, session);
    ctx.type = 'text/plain';
    ctx.body = `The protected page of ${session.user}`;
  });

  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    logins,
    pages,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function bodyOf(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
