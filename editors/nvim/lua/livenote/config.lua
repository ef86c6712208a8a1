--- Options of `require('livenote').setup()`: defaults, validation and the merged result.
local M = {}

---@alias livenote.KeymapAction
---| 'run'     # :LiveRun
---| 'stop'    # :LiveStop
---| 'make'    # :LiveMake
---| 'pause'   # :LivePause
---| 'resume'  # :LiveResume
---| 'list'    # :LiveList (the picker)
---| 'history' # :LiveHistory
---| 'status'  # :LiveStatus
---| 'undo'    # :LiveUndo
---| 'lens'    # run the code lens on the cursor line (vim.lsp.codelens.run)

---@class livenote.Options
---@field cmd? string[] How to start the server; default `{ 'livenote', 'lsp' }`.
---@field cmd_env? table<string, string> Extra environment variables for the server process.
---@field log_file? string A file the server appends its log to (`--log-file`, added to `cmd`); `~` is expanded. Default: none (the server logs only warnings, to Neovim's LSP log).
---@field filetypes? string[] Filetypes the server attaches to; default `{ 'markdown' }`.
---@field root_markers? string[] Files/directories that mark the workspace root; default `{ '.livenote.toml', '.git' }`.
---@field settings? table The server's client configuration layer (same shape as `.livenote.toml`), sent as initializationOptions.
---@field inlay_hints? boolean Enable inlay hints in attached buffers; default true.
---@field codelens? boolean Show and keep refreshing the status code lenses; default true.
---@field keymaps? boolean|table<livenote.KeymapAction, string|false> Buffer-local mappings: false (default) for none, true for the defaults, or a table overriding some of them (a `false` value drops one).
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer) Called after the plugin's own attach logic.
---@field debounce_ms? integer How long lens refreshes wait after the last text change; default 300.

---@class livenote.Config
---@field cmd string[]
---@field cmd_env? table<string, string>
---@field log_file? string
---@field filetypes string[]
---@field root_markers string[]
---@field settings table
---@field inlay_hints boolean
---@field codelens boolean
---@field keymaps table<livenote.KeymapAction, string|false>|false
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer)
---@field debounce_ms integer

--- The mappings `keymaps = true` installs; `<localleader>l` keeps them out of the way of the
--- user's own (and of markdown plugins, which mostly use `<leader>`).
---@type table<livenote.KeymapAction, string>
M.default_keymaps = {
  run = '<localleader>lr',
  stop = '<localleader>ls',
  make = '<localleader>lm',
  pause = '<localleader>lp',
  resume = '<localleader>lP',
  list = '<localleader>ll',
  history = '<localleader>lh',
  status = '<localleader>li',
  undo = '<localleader>lu',
  lens = '<localleader>lc',
}

---@return livenote.Config
function M.defaults()
  return {
    cmd = { 'livenote', 'lsp' },
    cmd_env = nil,
    log_file = nil,
    filetypes = { 'markdown' },
    root_markers = { '.livenote.toml', '.git' },
    settings = {},
    inlay_hints = true,
    codelens = true,
    keymaps = false,
    on_attach = nil,
    debounce_ms = 300,
  }
end

--- The effective configuration; set by `resolve()` (i.e. by setup()).
---@type livenote.Config
M.current = M.defaults()

--- Merge user options over the defaults and check their types, so a typo fails at setup with a
--- message naming the option rather than later inside an LSP callback.
---@param opts? livenote.Options
---@return livenote.Config
function M.resolve(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then
    error('livenote.setup: expected a table of options, got ' .. type(opts), 3)
  end
  local function strings(v)
    if type(v) ~= 'table' then
      return false
    end
    for _, s in ipairs(v) do
      if type(s) ~= 'string' then
        return false
      end
    end
    return true
  end
  -- Checked by hand rather than with vim.validate, whose calling convention changed between
  -- 0.10 and 0.11; a typo fails here, naming the option, not later inside an LSP callback.
  local function is(...)
    local types = { ... }
    return function(v)
      return vim.tbl_contains(types, type(v))
    end
  end
  ---@type table<string, {[1]: fun(v: any): boolean, [2]: string}>
  local checks = {
    cmd = { strings, 'a list of strings' },
    cmd_env = { is('table'), 'a table' },
    log_file = { is('string'), 'a file path' },
    filetypes = { strings, 'a list of strings' },
    root_markers = { strings, 'a list of strings' },
    settings = { is('table'), 'a table' },
    inlay_hints = { is('boolean'), 'a boolean' },
    codelens = { is('boolean'), 'a boolean' },
    keymaps = { is('boolean', 'table'), 'a boolean or a table' },
    on_attach = { is('function'), 'a function' },
    debounce_ms = { is('number'), 'a number of milliseconds' },
  }
  for name, value in pairs(opts) do
    local c = checks[name]
    if not c then
      -- A warning, not an error: a config written for a newer version should still load.
      vim.notify(('livenote.setup: unknown option %q (ignored)'):format(name), vim.log.levels.WARN)
    elseif not c[1](value) then
      error(('livenote.setup: %s must be %s, got %s'):format(name, c[2], vim.inspect(value)), 3)
    end
  end
  if opts.cmd and #opts.cmd == 0 then
    error('livenote.setup: cmd must name a program', 3)
  end

  local cfg = vim.tbl_extend('force', M.defaults(), opts)
  if opts.keymaps == true then
    cfg.keymaps = vim.deepcopy(M.default_keymaps)
  elseif type(opts.keymaps) == 'table' then
    cfg.keymaps = vim.tbl_extend('force', M.default_keymaps, opts.keymaps)
  else
    cfg.keymaps = false
  end
  M.current = cfg
  return cfg
end

--- The command that starts the server: `cmd`, then `--log-file <path>` when `log_file` is set.
---@param cfg livenote.Config
---@return string[]
function M.server_cmd(cfg)
  local cmd = vim.deepcopy(cfg.cmd)
  if cfg.log_file and cfg.log_file ~= '' then
    -- Absolute, so the file does not move with the server's working directory (the root).
    vim.list_extend(cmd, { '--log-file', vim.fn.fnamemodify(vim.fs.normalize(cfg.log_file), ':p') })
  end
  return cmd
end

return M
