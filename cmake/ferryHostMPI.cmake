# Which MPI implementation a found MPI is, read from its mpi.h: used when
# ferry is built (CMakeLists.txt records it) and again in ferryConfig.cmake,
# where a consumer's MPI must be the same one (an MPICH-built ferry linked
# beside Open MPI crashes at the first open). Language-neutral: reads the
# header, compiles nothing.
#
# ferry_host_mpi(<var> <include dirs...>) sets <var> to "openmpi <major>.<minor>",
# "mpich <version>" or "unknown", and <var>_NAME to openmpi, mpich or unknown.
function(ferry_host_mpi var)
  set(name unknown)
  set(version "")
  foreach(dir IN LISTS ARGN)
    if(NOT EXISTS "${dir}/mpi.h")
      continue()
    endif()
    file(STRINGS "${dir}/mpi.h" defines REGEX "^#define (OPEN_MPI|OMPI_(MAJOR|MINOR)_VERSION|MPICH_VERSION) ")
    foreach(line IN LISTS defines)
      if(line MATCHES "^#define OPEN_MPI ")
        set(name openmpi)
      elseif(line MATCHES "^#define OMPI_MAJOR_VERSION ([0-9]+)")
        set(major ${CMAKE_MATCH_1})
      elseif(line MATCHES "^#define OMPI_MINOR_VERSION ([0-9]+)")
        set(minor ${CMAKE_MATCH_1})
      elseif(line MATCHES "^#define MPICH_VERSION \"([^\"]*)\"")
        set(name mpich)
        set(version ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(name STREQUAL "openmpi" AND DEFINED major)
      set(version "${major}.${minor}")
    endif()
    if(NOT name STREQUAL "unknown")
      break()
    endif()
  endforeach()
  set(${var} "${name} ${version}" PARENT_SCOPE)
  set(${var}_NAME ${name} PARENT_SCOPE)
endfunction()
