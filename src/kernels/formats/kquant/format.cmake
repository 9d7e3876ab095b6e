ds_kernel_sources(generic kquant_activations.cpp)
ds_kernel_sources(reference kquant_formats.cpp)
