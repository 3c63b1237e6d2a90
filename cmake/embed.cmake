# Turns a file into a C array (cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake):
# the flame graph's template is kept as an HTML file in the repo and built into conv.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by cmake/embed.cmake */\n#include <stddef.h>\n\nextern const unsigned char ${NAME}[];\nextern const size_t ${NAME}_len;\nconst unsigned char ${NAME}[] = {\n${body}0};\nconst size_t ${NAME}_len = ${len};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
