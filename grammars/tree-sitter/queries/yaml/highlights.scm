; extends

; livenote: highlights of the `live:` block of a markdown note's YAML frontmatter, which
; Neovim's markdown parser injects as yaml (`minus_metadata`). Appended to whatever yaml
; highlights query is installed (nvim-treesitter's, or none). Only a top-level `live:` pair
; counts, and each key only at the level where livenote reads it. The copy at
; editors/nvim/queries/yaml/highlights.scm must stay identical (grammars/test/treesitter.sh).
; Priorities above the default 100 make these win over the base query's @property/@string.

; live:
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @keyword
          (#eq? @keyword "live")
          (#set! priority 105))))))

; live: objective, active, provider, model, triggers
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @property
                (#any-of? @property "objective" "active" "provider" "model" "triggers")
                (#set! priority 105)))))))))

; active: true / false (YAML 1.2 core schema: `yes` is a string, so it is not @boolean)
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @_active
                (#eq? @_active "active")
                value: (flow_node
                  (plain_scalar
                    (boolean_scalar) @boolean))
                (#set! priority 105)))))))))

; fields written by livenote: the whole pair, key and value, dimmed
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @_runtime
                (#any-of? @_runtime
                  "lastAttemptAt" "lastRunAt" "lastRunId" "lastRunSummary" "lastRunError")) @comment
              (#set! priority 110))))))))

; triggers: cronExpr, windows, eventMatchCriteria
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @_triggers
                (#eq? @_triggers "triggers")
                value: (block_node
                  (block_mapping
                    (block_mapping_pair
                      key: (flow_node) @property
                      (#any-of? @property "cronExpr" "windows" "eventMatchCriteria")
                      (#set! priority 105))))))))))))

; cronExpr: the cron expression
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @_triggers
                (#eq? @_triggers "triggers")
                value: (block_node
                  (block_mapping
                    (block_mapping_pair
                      key: (flow_node) @_cron
                      (#eq? @_cron "cronExpr")
                      value: (flow_node) @string.special
                      (#set! priority 105))))))))))))

; windows: - startTime / endTime
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @_triggers
                (#eq? @_triggers "triggers")
                value: (block_node
                  (block_mapping
                    (block_mapping_pair
                      key: (flow_node) @_windows
                      (#eq? @_windows "windows")
                      value: (block_node
                        (block_sequence
                          (block_sequence_item
                            (block_node
                              (block_mapping
                                (block_mapping_pair
                                  key: (flow_node) @property
                                  (#any-of? @property "startTime" "endTime")
                                  (#set! priority 105))))))))))))))))))

; windows: their HH:MM values
(stream
  (document
    (block_node
      (block_mapping
        (block_mapping_pair
          key: (flow_node) @_live
          (#eq? @_live "live")
          value: (block_node
            (block_mapping
              (block_mapping_pair
                key: (flow_node) @_triggers
                (#eq? @_triggers "triggers")
                value: (block_node
                  (block_mapping
                    (block_mapping_pair
                      key: (flow_node) @_windows
                      (#eq? @_windows "windows")
                      value: (block_node
                        (block_sequence
                          (block_sequence_item
                            (block_node
                              (block_mapping
                                (block_mapping_pair
                                  key: (flow_node) @_time
                                  (#any-of? @_time "startTime" "endTime")
                                  value: (flow_node) @number
                                  (#set! priority 105))))))))))))))))))
