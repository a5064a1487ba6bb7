# `cmake --install`: headers, the static libraries of every layer with an exported CMake package
# (find_package(posenc CONFIG) -> posenc::spec, ::reference, ::vectors, ::expected, ::judge,
# ::plugin_h, ::abi, ::adapters, ::reports, ::fast, ::hf_config), one pkg-config file per layer
# (posenc-LAYER.pc), the posenc CLI, the reference plugin, and the vectors with their schemas
# and MANIFEST (PREFIX/share/posenc/vectors, where the installed CLI looks).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Each layer, the layers it stands on, and what else a static link of it needs (pkg-config
# module names; libraries by -l). A consumer of one layer gets only what that layer pulls in.
set(POSENC_LAYERS spec reference vectors expected judge plugin_h abi adapters reports fast hf_config)
set(POSENC_spec_REQUIRES "")
set(POSENC_reference_REQUIRES "posenc-spec mpfr gmp")
set(POSENC_vectors_REQUIRES "posenc-spec simdjson libcrypto")
set(POSENC_expected_REQUIRES "posenc-vectors posenc-reference")
set(POSENC_judge_REQUIRES "posenc-expected")
set(POSENC_judge_LIBS "-lrapidcheck")
set(POSENC_plugin_h_REQUIRES "")
set(POSENC_abi_REQUIRES "posenc-spec posenc-plugin_h")
set(POSENC_adapters_REQUIRES "posenc-judge posenc-abi")
set(POSENC_adapters_LIBS "-ldl")
set(POSENC_reports_REQUIRES "posenc-judge")
set(POSENC_fast_REQUIRES "posenc-spec sleef")
set(POSENC_fast_LIBS "-lpthread")
set(POSENC_hf_config_REQUIRES "posenc-spec")

set(POSENC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/posenc)
file(RELATIVE_PATH POSENC_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" POSENC_PC_TO_PREFIX "${POSENC_PC_TO_PREFIX}")
foreach(layer IN LISTS POSENC_LAYERS)
  set(lib posenc_${layer})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${layer})
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # Relocatable: the prefix is found from the .pc file's own place (cmake --install --prefix P).
  set(POSENC_PC_NAME posenc-${layer})
  set(POSENC_PC_REQUIRES "${POSENC_${layer}_REQUIRES}")
  get_target_property(type ${lib} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(POSENC_PC_LIBS "")
  else()
    set(POSENC_PC_LIBS "-L\${libdir} -l${lib} ${POSENC_${layer}_LIBS}")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/posenc-layer.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/posenc-${layer}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/posenc-${layer}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
list(TRANSFORM POSENC_LAYERS PREPEND posenc_ OUTPUT_VARIABLE POSENC_LIBRARIES)

install(TARGETS ${POSENC_LIBRARIES} EXPORT posencTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Component `cli`: the CLI and the vectors it reads, which the Python package's wheel carries
# (python/pyproject.toml installs this component alone).
install(TARGETS posenc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(TARGETS posenc_reference_plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/posenc)
foreach(dir spec models reference fast conformance/vectors conformance/judge conformance/abi conformance/adapters
            conformance/reports)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/vectors/ DESTINATION ${CMAKE_INSTALL_DATADIR}/posenc/vectors COMPONENT cli)
# The Python package (pure Python, any interpreter version): PREFIX/share/posenc/python/posenc.
# Put PREFIX/share/posenc/python on sys.path (PYTHONPATH, or a .pth file in site-packages); it
# finds the CLI at PREFIX/bin/posenc (python/README.md). `pip install ./python` is the other way
# (its wheel carries the component `cli`).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/src/posenc DESTINATION ${CMAKE_INSTALL_DATADIR}/posenc/python
  PATTERN __pycache__ EXCLUDE)

install(EXPORT posencTargets NAMESPACE posenc:: DESTINATION ${POSENC_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/posencConfig.cmake.in
  ${PROJECT_BINARY_DIR}/posencConfig.cmake INSTALL_DESTINATION ${POSENC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/posencConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/posencConfig.cmake ${PROJECT_BINARY_DIR}/posencConfigVersion.cmake
  DESTINATION ${POSENC_CMAKE_DIR})
