--- A run's edits reach the disk: the one rule every editor follows (docs/editors.md). The
--- server labels the `workspace/applyEdit` of a run "livenote run"; when the note's buffer had
--- no unsaved changes before such an edit, the plugin writes the buffer after it, so that the
--- file on disk, other tools and other devices see the run (and `:q` does not stop at E37). A
--- buffer with the user's unsaved changes keeps the run's edit unsaved with them.

local M = {}

--- The label of the server's run edits (lsp/runs.rs RUN_EDIT_LABEL).
M.LABEL = 'livenote run'

--- The loaded buffers a workspace edit changes.
---@param edit lsp.WorkspaceEdit
---@return integer[]
local function edited_buffers(edit)
  local uris = {}
  for uri in pairs(edit.changes or {}) do
    uris[uri] = true
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      uris[change.textDocument.uri] = true
    end
  end
  local bufs = {}
  for uri in pairs(uris) do
    local ok, fname = pcall(vim.uri_to_fname, uri)
    local bufnr = ok and vim.fn.bufnr(fname) or -1
    if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then
      table.insert(bufs, bufnr)
    end
  end
  return bufs
end

--- Whether the file on disk holds what the buffer holds (nothing changed it behind the
--- buffer's back: writing then would overwrite another program's change).
---@param bufnr integer
---@return boolean
local function disk_matches(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local ok, disk = pcall(vim.fn.readfile, name)
  if not ok then
    return false
  end
  return vim.deep_equal(disk, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
end

--- Write a buffer the way `:update` does, without the user's pre-write hooks (a formatter
--- must not rewrite an agent's edit on its way out); BufWritePost still runs, so every
--- language client gets `didSave`.
---@param bufnr integer
local function write(bufnr)
  local ignore = vim.o.eventignore
  vim.o.eventignore = (ignore == '' and '' or ignore .. ',') .. 'BufWritePre,FileWritePre'
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd('silent keepalt lockmarks update')
  end)
  vim.o.eventignore = ignore
  if not ok then
    require('livenote').notify(
      ('could not write %s after the run: %s'):format(vim.api.nvim_buf_get_name(bufnr), tostring(err)),
      vim.log.levels.WARN
    )
  end
end

--- The client's workspace/applyEdit handler: the default one (or the user's global one), then
--- a write of each buffer a run's edit found clean.
---@type lsp.Handler
function M.on_apply_edit(err, params, ctx, config)
  local default = vim.lsp.handlers['workspace/applyEdit']
  if not (params and params.label == M.LABEL and params.edit) then
    return default(err, params, ctx, config)
  end
  local clean = {}
  for _, bufnr in ipairs(edited_buffers(params.edit)) do
    if not vim.bo[bufnr].modified and disk_matches(bufnr) then
      table.insert(clean, bufnr)
    end
  end
  -- Without the label: Neovim's handler would print "Workspace edit livenote run" for each.
  local unlabelled = vim.tbl_extend('force', {}, params)
  unlabelled.label = nil
  local result = default(err, unlabelled, ctx, config)
  if result and result.applied then
    for _, bufnr in ipairs(clean) do
      if vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].modified then
        write(bufnr)
      end
    end
  end
  return result
end

return M
