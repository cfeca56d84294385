# Writes a C++ source defining `extern const char* const NAME` with the text of IN (used to
# serve docs/openapi.json from the binary). Run by a custom command at build time.
file(READ "${IN}" _text)
set(_delim "quarry_embed")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/embed_text.cmake; do not edit.\nnamespace ${NAMESPACE} {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"${_delim}(${_text})${_delim}\";\n}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
