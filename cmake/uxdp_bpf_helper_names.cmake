# The eBPF helpers' names by id, from libbpf's bpf_helper_defs.h:
# cmake -DIN=.../bpf/bpf_helper_defs.h -DOUT=FILE.h -P uxdp_bpf_helper_names.cmake
# writes one row per helper, UXDP_BPF_HELPER_NAME(id, "bpf_name"), for
# src/bpf/helpers.c. Without IN (no libbpf-dev), the table is empty and
# helpers are named by number. Run at build time, like uxdp_bin2c.cmake.
set(rows "")
set(count 0)
if(IN AND EXISTS "${IN}")
  file(STRINGS "${IN}" lines REGEX "\\(\\*bpf_[a-z0-9_]+\\)\\(.*\\) = \\(void \\*\\) [0-9]+;")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ".*\\(\\*(bpf_[a-z0-9_]+)\\)\\(.*\\) = \\(void \\*\\) ([0-9]+);.*"
           "\\2;\\1" pair "${line}")
    list(GET pair 0 id)
    list(GET pair 1 name)
    string(APPEND rows "UXDP_BPF_HELPER_NAME(${id}, \"${name}\")\n")
    math(EXPR count "${count} + 1")
  endforeach()
  set(src "${IN}")
else()
  set(src "nothing (bpf_helper_defs.h not found)")
endif()
file(WRITE "${OUT}.tmp" "/* Generated at build time from ${src}: do not edit. ${count} helpers. */\n${rows}")
# Only a changed table touches the file, so helpers.c is not rebuilt for
# nothing.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
