vim.lsp.config('livenote', {
  cmd = { 'livenote', 'lsp' },
  filetypes = { 'markdown' },
  root_markers = { '.git', '.livenote.toml' },
})
vim.lsp.enable('livenote')
vim.lsp.inlay_hint.enable(true)
vim.api.nvim_create_autocmd({ 'LspAttach', 'BufEnter', 'InsertLeave' }, {
  pattern = { '*.md', '*.markdown' },
  callback = function(ev) vim.lsp.codelens.refresh({ bufnr = ev.buf }) end,
})
-- A run ends with $/progress "end": show its result in the lenses, as the plugin does.
vim.api.nvim_create_autocmd('LspProgress', {
  pattern = 'end',
  callback = function() vim.lsp.codelens.refresh() end,
})
