# `cmake --install`: headers, the static libraries with an exported CMake package
# (find_package(posenc CONFIG) -> posenc::spec, posenc::reference, posenc::fast,
# posenc::conformance), a pkg-config file, the posenc CLI, the reference plugin, and the vectors
# with their schemas and MANIFEST (PREFIX/share/posenc/vectors, where the installed CLI looks).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(POSENC_LIBRARIES posenc_spec posenc_reference posenc_fast posenc_conformance)
foreach(lib IN LISTS POSENC_LIBRARIES)
  string(REPLACE "posenc_" "" export_name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${export_name})
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS ${POSENC_LIBRARIES} EXPORT posencTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS posenc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS posenc_reference_plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/posenc)
foreach(part spec reference fast conformance)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${part}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/vectors/ DESTINATION ${CMAKE_INSTALL_DATADIR}/posenc/vectors)

set(POSENC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/posenc)
install(EXPORT posencTargets NAMESPACE posenc:: DESTINATION ${POSENC_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/posencConfig.cmake.in
  ${PROJECT_BINARY_DIR}/posencConfig.cmake INSTALL_DESTINATION ${POSENC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/posencConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/posencConfig.cmake ${PROJECT_BINARY_DIR}/posencConfigVersion.cmake
  DESTINATION ${POSENC_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own place (cmake --install --prefix P).
file(RELATIVE_PATH POSENC_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" POSENC_PC_TO_PREFIX "${POSENC_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/posenc.pc.in ${PROJECT_BINARY_DIR}/posenc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/posenc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
