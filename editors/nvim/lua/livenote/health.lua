--- :checkhealth livenote
local M = {}

local health = vim.health

function M.check()
  local livenote = require('livenote')
  local cfg = require('livenote.config').current

  health.start('livenote: Neovim')
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. version .. ' (vim.lsp.config / vim.lsp.enable)')
  elseif vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. version .. ' (vim.lsp.start on FileType)')
  else
    health.error('Neovim ' .. version .. ' is too old', { 'livenote needs Neovim 0.10 or later' })
  end
  if livenote.did_setup then
    health.ok('setup() was called')
  else
    health.warn('setup() has not been called: the server does not start and there are no :Live* commands', {
      "add require('livenote').setup({}) to your config (lazy.nvim: opts = {})",
    })
  end

  health.start('livenote: server binary')
  local bin = cfg.cmd[1]
  local path = vim.fn.exepath(bin)
  if path == '' then
    health.error(('`%s` is not an executable (cmd = %s)'):format(bin, vim.inspect(cfg.cmd)), {
      'install it: cargo install --locked --path server (from a livenote checkout)',
      "or point setup({ cmd = { '/path/to/livenote', 'lsp' } }) at it",
    })
  else
    local ok, res = pcall(function()
      return vim.system({ path, '--version' }, { text = true, env = cfg.cmd_env }):wait(5000)
    end)
    local out = ok and res and vim.trim((res.stdout or '') .. (res.stderr or '')) or ''
    if ok and res and res.code == 0 and out ~= '' then
      health.ok(('%s (%s)'):format(out, path))
    else
      health.error(
        ('`%s --version` failed: %s'):format(
          path,
          ok and (out ~= '' and out or ('exit ' .. tostring(res and res.code))) or tostring(res)
        )
      )
    end
  end

  local cmd = require('livenote.config').server_cmd(cfg)
  if cmd[#cmd - 1] == '--log-file' then
    health.info('the server appends its log to ' .. cmd[#cmd])
  else
    health.info('no log file: the server logs only warnings and errors, to the LSP log (option log_file)')
  end

  health.start('livenote: language server')
  local clients = vim.lsp.get_clients({ name = livenote.NAME })
  if #clients == 0 then
    health.info(
      'no livenote server is running; it starts when a note (filetype '
        .. table.concat(cfg.filetypes, '/')
        .. ') is opened'
    )
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    local bufs = vim.tbl_map(function(b)
      return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':~:.')
    end, vim.tbl_keys(client.attached_buffers or {}))
    health.ok(
      ('client %d: %s %s, root %s, %d %s%s'):format(
        client.id,
        info.name or 'livenote',
        info.version or '',
        client.root_dir or '(none)',
        #bufs,
        #bufs == 1 and 'buffer' or 'buffers',
        #bufs > 0 and (': ' .. table.concat(bufs, ', ')) or ''
      )
    )
  end
  -- The buffer the user was in before :checkhealth opened its own.
  local alt = vim.fn.bufnr('#')
  if
    alt > 0
    and vim.api.nvim_buf_is_loaded(alt)
    and vim.tbl_contains(cfg.filetypes, vim.bo[alt].filetype)
  then
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(alt), ':~:.')
    if livenote.get_client(alt) then
      health.ok('attached to ' .. name)
    else
      health.warn('not attached to ' .. name, {
        'the buffer must be a file on disk; server errors are in the LSP log (:lua vim.cmd.edit(vim.lsp.log.get_filename()))',
      })
    end
  end
  health.info(
    ('lenses %s, inlay hints %s, root markers %s'):format(
      cfg.codelens and 'on' or 'off',
      cfg.inlay_hints and 'on' or 'off',
      table.concat(cfg.root_markers, ', ')
    )
  )
end

return M
