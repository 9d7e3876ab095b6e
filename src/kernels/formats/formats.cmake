# The weight formats: one folder each, its files listed in its format.cmake (ds_kernel_sources).
ds_kernel_sources(generic weight_formats.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/row_major/format.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/bf16_panels/format.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/int8_panels/format.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/q8_0/format.cmake)
