--- What livenote does to a note outside the buffer reaches the editor:
---
--- - a note another livenote process changed (`livenote watch` ran it first, `livenote run`
---   in a shell) is reloaded when its buffer has no unsaved changes: the server says which
---   notes changed (`livenote/notesChanged`) and the plugin checks those buffers at once, as
---   'autoread' would on focus, so the buffer and its lenses show the run (docs/editors.md);
--- - the message a `:LiveRun` leaves ("livenote: updating journal.md…") is followed by the
---   run's outcome when it ends, so the command line does not say "updating" for good.

local M = {}

--- The server's notification naming the notes whose status changed (asked for with
--- `experimental.livenote.notesChanged`).
M.NOTES_CHANGED = 'livenote/notesChanged'

--- The loaded buffers of a note, by its URI: compared by real path, since the server gives
--- back the editor's own spelling only for paths the editor named.
---@param uri string
---@return integer[]
local function buffers_of(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return {}
  end
  local real = vim.uv.fs_realpath(fname) or fname
  local found = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= '' and vim.api.nvim_buf_is_loaded(b) and (vim.uv.fs_realpath(name) or name) == real then
      table.insert(found, b)
    end
  end
  return found
end

--- Reload a buffer from its file when the file changed and the buffer has no unsaved changes
--- (`:checktime` with 'autoread' on for that buffer alone: the user's own 'autoread' stays).
--- A buffer with unsaved changes is left alone: Neovim asks about it when it next checks.
---@param bufnr integer
function M.reload_if_clean(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].modified or vim.bo[bufnr].buftype ~= '' then
    return
  end
  pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd('setlocal autoread')
    vim.cmd('silent! checktime ' .. bufnr)
    -- For a global-local option, `:set opt<` drops the buffer's own value again.
    vim.cmd('set autoread<')
  end)
end

--- Client handler of `livenote/notesChanged` `{ uris }`.
---@type lsp.Handler
function M.on_notes_changed(_, params)
  local uris = type(params) == 'table' and type(params.uris) == 'table' and params.uris or {}
  vim.schedule(function()
    for _, uri in ipairs(uris) do
      if type(uri) == 'string' then
        for _, bufnr in ipairs(buffers_of(uri)) do
          M.reload_if_clean(bufnr)
        end
      end
    end
  end)
  return vim.NIL
end

-------------------------------------------------------------------------------------------------
-- The end of a :LiveRun

--- Runs started with :LiveRun whose end is still to be said, by buffer: the note's name, its
--- `lastAttemptAt` before the run (a run writes a new one first), when it was asked.
---@type table<integer, { name: string, attempt: string?, asked: integer }>
local pending = {}

--- A pending run older than this is forgotten (a run that never started: the server said why).
local FORGET_MS = 3 * 3600 * 1000

--- `lastAttemptAt` as the buffer's frontmatter has it, if any.
---@param bufnr integer
---@return string?
local function attempt_of(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, 400, false)
  if (lines[1] or ''):gsub('^\239\187\191', ''):gsub('\r$', '') ~= '---' then
    return nil
  end
  for i = 2, #lines do
    local l = lines[i]:gsub('\r$', '')
    if l == '---' or l == '...' then
      return nil
    end
    local v = l:match('^%s+lastAttemptAt:%s*["\']?([^"\'%s]+)')
    if v then
      return v
    end
  end
  return nil
end

--- A :LiveRun of `bufnr` was accepted: its end is to be said.
---@param bufnr integer
---@param name string
function M.expect_run(bufnr, name)
  pending[bufnr] = { name = name, attempt = attempt_of(bufnr), asked = vim.uv.now() }
end

--- A livenote run ended (`$/progress` end, `message` its outcome as the server words it: the
--- summary, "stopped", "failed: …", "nothing ran: …"). The pending run whose buffer shows a new
--- attempt is the one that ended; its message replaces "updating …". Failures and runs that
--- did not happen are said by the server itself (window/showMessage), so not twice.
---@param message string?
function M.run_ended(message)
  local now = vim.uv.now()
  for bufnr, p in pairs(pending) do
    if not vim.api.nvim_buf_is_valid(bufnr) or now - p.asked > FORGET_MS then
      pending[bufnr] = nil
    elseif attempt_of(bufnr) ~= p.attempt then
      pending[bufnr] = nil
      message = type(message) == 'string' and vim.trim(message) or ''
      if not (message:find('^failed:') or message:find('^nothing ran:')) then
        local said = message == 'stopped' and 'stopped' or ('updated' .. (message ~= '' and (': ' .. message) or ''))
        require('livenote').notify(p.name .. ': ' .. said)
      end
      return
    end
  end
end

return M
