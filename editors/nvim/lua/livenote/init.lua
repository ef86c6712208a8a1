--- livenote for Neovim: starts `livenote lsp` on markdown notes, keeps its status lenses and
--- inlay hints current, and adds the :Live* commands. See `:help livenote`.
---
--- ```lua
--- require('livenote').setup({})
--- ```
local compat = require('livenote.compat')
local config = require('livenote.config')
local lens = require('livenote.lens')

local M = {}

--- The server's name, as in vim.lsp.config('livenote') and vim.lsp.get_clients({ name = ... }).
M.NAME = 'livenote'

--- Whether setup() ran (for :checkhealth).
M.did_setup = false

local notify_opts = { title = 'livenote' }

--- Show a message the way the rest of the plugin does ("livenote: ..."), through vim.notify so
--- notification plugins pick it up.
---@param msg string
---@param level? integer vim.log.levels.*
function M.notify(msg, level)
  vim.notify('livenote: ' .. msg, level or vim.log.levels.INFO, notify_opts)
end

--- The livenote client attached to a buffer, if any.
---@param bufnr? integer default: the current buffer
---@return vim.lsp.Client?
function M.get_client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.NAME })[1]
end

--- The workspace root for a buffer, or nil when livenote should not attach to it (not a file:
--- help, terminals, fugitive:// and other scratch or remote buffers).
---@param bufnr integer
---@return string?
function M.root_dir(bufnr)
  if vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  -- A note outside any marked workspace still gets the server, rooted at its own folder, so
  -- validation and "Make live" work on any markdown file.
  return vim.fs.root(bufnr, config.current.root_markers) or vim.fs.dirname(vim.fs.normalize(name))
end

--- The client configuration shared by the 0.10 and 0.11 code paths.
---@param cfg livenote.Config
---@return vim.lsp.ClientConfig
local function client_config(cfg)
  -- A run's edit into a clean buffer is written to disk (run_edits.lua); a note another
  -- livenote process changed is reloaded into its clean buffer (follow.lua).
  -- This client can prompt for "Ask livenote…" and shows `livenote/notify` (ask.lua).
  local follow = require('livenote.follow')
  local ask = require('livenote.ask')
  local handlers = {
    ['workspace/applyEdit'] = require('livenote.run_edits').on_apply_edit,
    [follow.NOTES_CHANGED] = follow.on_notes_changed,
    [ask.NOTIFY] = ask.on_notify,
  }
  local capabilities = { experimental = { livenote = { notesChanged = true, ask = true, notify = true } } }
  if cfg.codelens then
    -- The lenses are shown (0.10 does not say so itself): the server then leaves the status
    -- out of the inlay hints of the `live:` line, where it would read twice.
    capabilities.textDocument = { codeLens = { dynamicRegistration = false } }
  end
  if cfg.codelens and not lens.native() then
    -- Neovim 0.10/0.11 neither advertise nor handle workspace/codeLens/refresh; without it the
    -- server would never tell the editor that a run started or finished.
    capabilities.workspace = { codeLens = { refreshSupport = true } }
    handlers[lens.REFRESH] = lens.on_refresh
  end
  if not compat.has_011 then
    -- 0.10 replaces (does not extend) the defaults with a client's `capabilities`.
    capabilities = vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), capabilities)
  end
  return {
    name = M.NAME,
    cmd = config.server_cmd(cfg),
    cmd_env = cfg.cmd_env,
    -- The server reads its client configuration layer from initializationOptions.
    init_options = cfg.settings,
    capabilities = capabilities,
    handlers = handlers,
  }
end

--- Lens refreshes, inlay hints, keymaps and the user's on_attach for a newly attached buffer.
---@param client vim.lsp.Client
---@param bufnr integer
local function on_attach(client, bufnr)
  local cfg = config.current
  local group = vim.api.nvim_create_augroup('livenote.buffer.' .. bufnr, { clear = true })
  if cfg.inlay_hints and compat.supports(client, 'textDocument/inlayHint', bufnr) then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if cfg.codelens and compat.supports(client, 'textDocument/codeLens', bufnr) then
    lens.attach(bufnr, group, cfg.debounce_ms)
  end
  if cfg.keymaps then
    require('livenote.commands').set_keymaps(bufnr, cfg.keymaps)
  end
  if cfg.on_attach then
    cfg.on_attach(client, bufnr)
  end
end

--- Start (or reuse) the server for a buffer on Neovim 0.10, where vim.lsp.config does not exist.
---@param bufnr integer
---@param base vim.lsp.ClientConfig
local function start_010(bufnr, base)
  local root = M.root_dir(bufnr)
  if not root then
    return
  end
  local c = vim.deepcopy(base)
  c.root_dir = root
  vim.lsp.start(c, { bufnr = bufnr })
end

--- Configure and start livenote. Safe to call again (the last options win).
---@param opts? livenote.Options
function M.setup(opts)
  local cfg = config.resolve(opts)
  local base = client_config(cfg)
  local group = vim.api.nvim_create_augroup('livenote', { clear = true })

  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    desc = 'livenote: lenses, inlay hints and keymaps',
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == M.NAME then
        on_attach(client, ev.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    pattern = 'end',
    desc = "livenote: say how a :LiveRun ended",
    callback = function(ev)
      local data = ev.data or {}
      local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
      if client and client.name == M.NAME then
        local value = type(data.params) == 'table' and data.params.value or {}
        require('livenote.follow').run_ended(type(value) == 'table' and value.message or nil)
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == M.NAME then
        lens.forget(ev.buf)
        pcall(vim.api.nvim_del_augroup_by_name, 'livenote.buffer.' .. ev.buf)
      end
    end,
  })

  if compat.has_011 then
    ---@type vim.lsp.Config
    local c = vim.tbl_extend('force', base, {
      filetypes = cfg.filetypes,
      root_dir = function(bufnr, on_dir)
        local root = M.root_dir(bufnr)
        if root then
          on_dir(root)
        end
      end,
    })
    c.name = nil
    vim.lsp.config(M.NAME, c)
    -- Also starts the server for matching buffers already open (lazy loading).
    vim.lsp.enable(M.NAME)
  else
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = cfg.filetypes,
      desc = 'livenote: start the language server',
      callback = function(ev)
        start_010(ev.buf, base)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(cfg.filetypes, vim.bo[bufnr].filetype) then
        start_010(bufnr, base)
      end
    end
  end

  require('livenote.commands').create()
  -- The server's "Ask livenote…" code action sends the note only: the plugin asks for the rest.
  vim.lsp.commands[require('livenote.ask').COMMAND] = require('livenote.ask').on_command
  M.did_setup = true
end

-------------------------------------------------------------------------------------------------
-- Lua API: what the :Live* commands call, for mappings and other plugins. Each acts on `bufnr`
-- (default: the current buffer) and reports problems through vim.notify.

---@param bufnr? integer
---@param context? string extra context for the agent (":LiveRun <text>")
function M.run(bufnr, context)
  require('livenote.commands').run(bufnr, context)
end

---@param bufnr? integer
function M.stop(bufnr)
  require('livenote.commands').simple('stop', bufnr)
end

---@param bufnr? integer
function M.make_live(bufnr)
  require('livenote.commands').simple('make', bufnr)
end

---@param bufnr? integer
function M.make_passive(bufnr)
  require('livenote.commands').simple('passive', bufnr)
end

---@param bufnr? integer
function M.pause(bufnr)
  require('livenote.commands').simple('pause', bufnr)
end

---@param bufnr? integer
function M.resume(bufnr)
  require('livenote.commands').simple('resume', bufnr)
end

---@param bufnr? integer
function M.undo(bufnr)
  require('livenote.commands').simple('undo', bufnr)
end

--- Delete the agent memory of a note (`livenote memory NOTE clear`).
---@param bufnr? integer
function M.clear_memory(bufnr)
  require('livenote.commands').simple('memory', bufnr)
end

---@param bufnr? integer
function M.trust(bufnr)
  require('livenote.commands').simple('trust', bufnr)
end

--- Fill the quickfix list with every live note of the running servers and open it.
---@param opts? { open?: boolean, on_done?: fun(items: table[]) }
function M.list(opts)
  require('livenote.commands').list(opts)
end

--- Pick one of the live notes through vim.ui.select and open it (`:LiveList`).
---@param opts? { on_done?: fun(entries: table[]) }
function M.pick(opts)
  require('livenote.commands').pick(opts)
end

--- The current note's runs in a scratch buffer (`:LiveHistory`).
---@param bufnr? integer
---@param on_done? fun(history_buf: integer)
function M.history(bufnr, on_done)
  require('livenote.commands').history(bufnr, on_done)
end

--- Ask livenote about a note (`:LiveAsk`): the server's model acts on it or answers; the reply
--- is shown with vim.notify. Without `sentence`, vim.ui.input asks for one.
---@param bufnr? integer
---@param sentence? string
function M.ask(bufnr, sentence)
  require('livenote.commands').ask(bufnr, sentence)
end

---@param bufnr? integer
function M.status(bufnr)
  require('livenote.commands').status(bufnr)
end

--- Refresh the status lenses of a buffer now.
---@param bufnr? integer
function M.refresh_lenses(bufnr)
  lens.refresh((bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr)
end

--- The status lens of the current buffer ("● Live · updated 5 min ago", "Paused", ...), or ''
--- when the buffer is not a live note: for a statusline. Reads the lenses already fetched, so
--- it costs nothing.
---@param bufnr? integer
---@return string
function M.statusline(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.get_client(bufnr)
  if not client then
    return ''
  end
  for _, l in ipairs(lens.get(bufnr)) do
    -- The status lens is the one that does nothing when clicked (empty command id).
    if l.command and (l.command.command or '') == '' then
      return l.command.title
    end
  end
  return ''
end

return M
