import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [react()],
  // Tauri serves ui/dist through its own protocol, so assets must resolve relative to index.html.
  base: "./",
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { outDir: "dist", emptyOutDir: true },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    // Style sheets are left out of tests, except where a test reads the rules jsdom cannot apply.
    css: { include: [/checkpoints\.css/] },
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
