// Vite's `?inline` imports: the file's text (for a stylesheet inside a shadow root).
declare module '*.css?inline' {
  const text: string
  export default text
}
