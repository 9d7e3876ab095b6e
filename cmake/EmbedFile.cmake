# Embeds a data file into a library as a byte array (assembler .incbin), so the binary carries
# its default tokenizer and chat template without an install step or a runtime search path.
#   embed_file(TARGET target SYMBOL name FILE path)
# defines `extern "C" const char name[]; extern "C" const char name_end[];`.
function(embed_file)
  cmake_parse_arguments(EMBED "" "TARGET;SYMBOL;FILE" "" ${ARGN})
  set(asm "${CMAKE_CURRENT_BINARY_DIR}/embed_${EMBED_SYMBOL}.S")
  string(CONCAT content
    "  .section .rodata\n"
    "  .global ${EMBED_SYMBOL}\n"
    "  .global ${EMBED_SYMBOL}_end\n"
    "  .balign 16\n"
    "${EMBED_SYMBOL}:\n"
    "  .incbin \"${EMBED_FILE}\"\n"
    "${EMBED_SYMBOL}_end:\n"
    "  .byte 0\n"
    "  .section .note.GNU-stack,\"\",@progbits\n")
  # file(CONFIGURE) rewrites only on change, so re-running cmake does not rebuild the binary.
  file(CONFIGURE OUTPUT "${asm}" CONTENT "${content}" @ONLY)
  set_source_files_properties("${asm}" PROPERTIES OBJECT_DEPENDS "${EMBED_FILE}")
  target_sources(${EMBED_TARGET} PRIVATE "${asm}")
endfunction()
