// The sign-in, sign-up and error pages, in English and French (chosen by ui_locales, OIDC Core §3.1.2.1).

export type Locale = 'en' | 'fr';

const TEXT = {
  en: {
    signInTitle: 'Sign in',
    signInHeading: 'Sign in to continue to {client}',
    signUpTitle: 'Create an account',
    signUpHeading: 'Create an account for {client}',
    email: 'Email address',
    password: 'Password',
    name: 'Full name',
    signIn: 'Sign in',
    signUp: 'Create account',
    cancel: 'Cancel',
    wrongPassword: 'Incorrect email address or password.',
    signUpInvalid: 'Enter an email address, a name and a password of at least 8 characters.',
    accountExists: 'An account with this email address already exists.',
    errorTitle: 'Sign-in error',
    unknownClient: 'This application is not registered with the identity service.',
    badRedirect: 'The redirect address does not match the one registered for this application.',
    unknownTransaction: 'This sign-in request is unknown or has expired. Start again from the application.',
    badForm: 'The form could not be read.',
  },
  fr: {
    signInTitle: 'Connexion',
    signInHeading: 'Connectez-vous pour continuer vers {client}',
    signUpTitle: 'Créer un compte',
    signUpHeading: 'Créez un compte pour {client}',
    email: 'Adresse e-mail',
    password: 'Mot de passe',
    name: 'Nom complet',
    signIn: 'Se connecter',
    signUp: 'Créer le compte',
    cancel: 'Annuler',
    wrongPassword: 'Adresse e-mail ou mot de passe incorrect.',
    signUpInvalid: 'Saisissez une adresse e-mail, un nom et un mot de passe d’au moins 8 caractères.',
    accountExists: 'Un compte existe déjà avec cette adresse e-mail.',
    errorTitle: 'Erreur de connexion',
    unknownClient: 'Cette application n’est pas enregistrée auprès du service d’identité.',
    badRedirect: 'L’adresse de redirection ne correspond pas à celle enregistrée pour cette application.',
    unknownTransaction: 'Cette demande de connexion est inconnue ou a expiré. Recommencez depuis l’application.',
    badForm: 'Le formulaire n’a pas pu être lu.',
  },
} as const;

export type MessageKey = keyof (typeof TEXT)['en'];

export function t(locale: Locale, key: MessageKey): string {
  return TEXT[locale][key];
}

/** ui_locales is a space-separated list of BCP 47 tags in preference order; the first supported one wins. */
export function pickLocale(uiLocales: string | undefined): Locale {
  for (const tag of (uiLocales ?? '').split(' ')) {
    const primary = tag.split(/[-_]/)[0]?.toLowerCase();
    if (primary === 'en' || primary === 'fr') return primary;
  }
  return 'en';
}

export function escapeHtml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function page(locale: Locale, title: string, main: string): string {
  return `<!doctype html>
<html lang="${locale}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
${main}
</main>
</body>
</html>
`;
}

function errorLine(error: string | undefined): string {
  return error ? `<p role="alert" class="error">${escapeHtml(error)}</p>\n` : '';
}

export interface FormPage {
  locale: Locale;
  tx: string;
  clientName: string;
  email: string;
  name?: string;
  error?: string;
}

export function signInPage(p: FormPage): string {
  const L = p.locale;
  return page(
    L,
    t(L, 'signInTitle'),
    `<h1>${escapeHtml(t(L, 'signInHeading').replace('{client}', p.clientName))}</h1>
${errorLine(p.error)}<form id="sign-in" method="post" action="/oauth/login" enctype="application/x-www-form-urlencoded">
<input type="hidden" name="tx" value="${escapeHtml(p.tx)}">
<label for="email">${t(L, 'email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(p.email)}">
<label for="password">${t(L, 'password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" name="action" value="login">${t(L, 'signIn')}</button>
<button type="submit" name="action" value="cancel" formnovalidate>${t(L, 'cancel')}</button>
</form>`,
  );
}

export function signUpPage(p: FormPage): string {
  const L = p.locale;
  return page(
    L,
    t(L, 'signUpTitle'),
    `<h1>${escapeHtml(t(L, 'signUpHeading').replace('{client}', p.clientName))}</h1>
${errorLine(p.error)}<form id="sign-up" method="post" action="/oauth/signup" enctype="application/x-www-form-urlencoded">
<input type="hidden" name="tx" value="${escapeHtml(p.tx)}">
<label for="email">${t(L, 'email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(p.email)}">
<label for="name">${t(L, 'name')}</label>
<input id="name" name="name" type="text" autocomplete="name" required value="${escapeHtml(p.name ?? '')}">
<label for="password">${t(L, 'password')}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8">
<button type="submit" name="action" value="signup">${t(L, 'signUp')}</button>
<button type="submit" name="action" value="cancel" formnovalidate>${t(L, 'cancel')}</button>
</form>`,
  );
}

export function errorPage(locale: Locale, message: MessageKey): string {
  return page(
    locale,
    t(locale, 'errorTitle'),
    `<h1>${t(locale, 'errorTitle')}</h1>\n<p role="alert" class="error">${t(locale, message)}</p>`,
  );
}
