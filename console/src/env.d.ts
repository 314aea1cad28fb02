/** Stylesheets are bundled by Vite into files of their own (allowed by the CSP's style-src). */
declare module '*.css';
