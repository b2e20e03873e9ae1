# Katran's balancer (facebookincubator/katran, GPL: not in this tree),
# built from a checkout the user names, as Katran builds it (clang -O2
# -target bpf; its headers include <string.h>, whose 32-bit stubs a BPF
# target wants: an empty one). test_bpf_kernel's test_katran compares it,
# configured, with the kernel, and uxdp-bench bpf runs it on the dev path;
# both say they skipped without one. Sets UXDP_KATRAN_O and target
# uxdp_katran_obj.
set(UXDP_KATRAN_DIR "" CACHE PATH
    "A Katran checkout: test_bpf_kernel and uxdp-bench bpf use its balancer")
set(UXDP_KATRAN_O "")
if(UXDP_KATRAN_DIR AND UXDP_CLANG AND
   EXISTS "${UXDP_KATRAN_DIR}/katran/lib/bpf/balancer.bpf.c")
  set(k_dir ${CMAKE_BINARY_DIR}/katran)
  file(MAKE_DIRECTORY ${k_dir}/stub/gnu)
  file(TOUCH ${k_dir}/stub/gnu/stubs-32.h)
  set(UXDP_KATRAN_O ${k_dir}/balancer.o)
  add_custom_command(OUTPUT ${UXDP_KATRAN_O}
    COMMAND ${UXDP_CLANG} ${UXDP_BPF_CFLAGS} -mcpu=v3 -I${UXDP_KATRAN_DIR}
            -I${k_dir}/stub -Wno-unused-value -Wno-pointer-sign
            -Wno-compare-distinct-pointer-types
            -c ${UXDP_KATRAN_DIR}/katran/lib/bpf/balancer.bpf.c
            -o ${UXDP_KATRAN_O}
    DEPENDS ${UXDP_KATRAN_DIR}/katran/lib/bpf/balancer.bpf.c
    COMMENT "Katran's balancer")
  add_custom_target(uxdp_katran_obj ALL DEPENDS ${UXDP_KATRAN_O})
  message(STATUS "uxdp: Katran's balancer from ${UXDP_KATRAN_DIR}")
elseif(UXDP_KATRAN_DIR)
  message(WARNING "uxdp: UXDP_KATRAN_DIR=${UXDP_KATRAN_DIR} has no "
          "katran/lib/bpf/balancer.bpf.c (or no clang): not built")
endif()
