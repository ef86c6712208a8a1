---@brief
---
--- https://github.com/livenote/livenote
---
--- livenote makes markdown notes live: a `live:` block in a note's YAML front matter gives it
--- an objective and triggers, and a scheduler runs an agent that keeps the note's body current.
--- The language server checks the block as you type, completes and explains its keys, and shows
--- each note's status in code lenses and inlay hints.
---
--- Install the `livenote` binary with mason.nvim (`:MasonInstall livenote`), from the archives
--- of https://github.com/livenote/livenote/releases, or with cargo:
--- ```sh
--- cargo binstall livenote   # or: cargo install --locked livenote
--- ```
---
--- The commands (`:LiveRun`, `:LiveTrust`, ...) and lens refreshes on Neovim 0.10/0.11 come
--- with the plugin in the repository's `editors/nvim` folder (`:help livenote`).
---@type vim.lsp.Config
return {
  cmd = { 'livenote', 'lsp' },
  filetypes = { 'markdown' },
  root_markers = { '.livenote.toml', '.git' },
}
