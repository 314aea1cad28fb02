import { useState } from 'preact/hooks';
import { RunPage } from './pages/run';
import { SchedulePage } from './pages/schedule';
import { ScheduleFormPage } from './pages/schedule-form';
import { SchedulesPage } from './pages/schedules';
import { SignIn } from './pages/sign-in';
import { TargetsPage } from './pages/targets';
import { TenantsPage } from './pages/tenants';
import { UsagePage } from './pages/usage';
import { href, type Route, useRoute } from './router';
import { clearSession, restoreSession, type Session } from './session';

export function App() {
  const [session, setSession] = useState<Session | null>(restoreSession);
  const route = useRoute();
  if (!session) return <SignIn onSignedIn={setSession} />;
  const signOut = () => {
    clearSession();
    setSession(null);
  };
  const links: Array<[string, string, Route['page'][]]> =
    session.role === 'admin'
      ? [['Tenants', href.tenants(), ['tenants']]]
      : [
          [
            'Schedules',
            href.schedules(),
            ['schedules', 'schedule', 'schedule-new', 'schedule-edit', 'run'],
          ],
          ['Targets', href.targets(), ['targets']],
          ['Usage', href.usage(), ['usage']],
        ];
  return (
    <div class="shell">
      <nav class="sidebar">
        <div class="brand">dueline</div>
        {links.map(([label, to, pages]) => (
          <a key={label} href={to} class={pages.includes(route.page) ? 'active' : ''}>
            {label}
          </a>
        ))}
        <button class="link sign-out" onClick={signOut}>
          Sign out
        </button>
      </nav>
      <main class="content">{page(session, route)}</main>
    </div>
  );
}

function page(session: Session, route: Route) {
  if (session.role === 'admin') return <TenantsPage session={session} />;
  switch (route.page) {
    case 'schedules':
      return <SchedulesPage session={session} />;
    case 'schedule-new':
      return <ScheduleFormPage session={session} />;
    case 'schedule-edit':
      return <ScheduleFormPage session={session} id={route.id} key={route.id} />;
    case 'schedule':
      return <SchedulePage session={session} id={route.id} key={route.id} />;
    case 'run':
      return <RunPage session={session} id={route.id} key={route.id} />;
    case 'targets':
      return <TargetsPage session={session} />;
    case 'usage':
      return <UsagePage session={session} />;
    case 'tenants':
      // The tenants view needs the admin token; a tenant key lands on its schedules.
      return <SchedulesPage session={session} />;
  }
}
