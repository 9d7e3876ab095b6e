ds_kernel_sources(generic int8_panels_format.cpp int8_panels_reference.cpp)
ds_kernel_sources(avx512_vnni matmul_int8_avx512.cpp)
ds_kernel_sources(amx matmul_int8_amx.cpp)
ds_kernel_sources(avx2 matmul_int8_avx2.cpp)
