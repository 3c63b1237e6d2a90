# Warnings as curl and git use them. STRICT adds the integer-conversion
# warnings for the code that parses untrusted bytes, where a silent
# truncation becomes a memory bug.
function(conv_warnings target)
  set(opts -Wall -Wextra -Wshadow -Wvla -Wstrict-prototypes -Wmissing-prototypes
           -Wformat=2 -Wcast-align -Wimplicit-fallthrough -Wundef -Wpointer-arith
           -Wwrite-strings -Wold-style-definition)
  if(ARGV1 STREQUAL "STRICT")
    list(APPEND opts -Wconversion -Wno-sign-conversion)
  endif()
  if(CONV_WERROR)
    list(APPEND opts -Werror)
  endif()
  target_compile_options(${target} PRIVATE ${opts})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
endfunction()
