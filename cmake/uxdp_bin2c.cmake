# A file's bytes as a C array: cmake -DIN=FILE -DOUT=FILE.c -DSRC=NAME
# -DNAME=SYMBOL -P uxdp_bin2c.cmake (no xxd needed). A file of the source
# tree, not written at configure time: a configure (make install runs one)
# must not make the embedded object, and the library, out of date.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n\t" bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated at build time from ${SRC}: do not edit. */\n#include <stddef.h>\n\nextern const unsigned char ${NAME}[];\nextern const size_t ${NAME}_len;\n\n__attribute__((aligned(8))) const unsigned char ${NAME}[] = {\n\t${bytes}\n};\nconst size_t ${NAME}_len = ${len};\n")
