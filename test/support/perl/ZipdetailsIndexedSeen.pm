# Loaded into zipdetails 2.104 (Debian 12's perl) with `perl -I<this folder> -MZipdetailsIndexedSeen`.
# Its Seen::save compares each central header with every earlier one to report duplicates and
# overlaps: 65,536 entries take half an hour on one core, over an hour on a busy CI machine. This
# replaces that one sub, once the script is compiled, with one that finds the earlier entries it
# could report through an index of their start offsets, then applies the tool's own tests to them
# and prints the same lines in the same order. Everything else zipdetails reads and checks is its
# own. test/support/zipdetails-indexed.test.ts shows both give the same output, complaints included.
package ZipdetailsIndexedSeen;

use strict;
use warnings;

INIT {
    no warnings 'redefine';
    *Seen::save = \&save;
}

# The first position of @$starts whose value is >= $value (the array is sorted).
sub lowerBound {
    my ($starts, $value) = @_;
    my ($low, $high) = (0, scalar @$starts);
    while ($low < $high) {
        my $middle = ($low + $high) >> 1;
        if ($starts->[$middle] < $value) { $low = $middle + 1 } else { $high = $middle }
    }
    return $low;
}

# The numbers of the earlier entries that start in [$low, $high].
sub startingIn {
    my ($index, $low, $high) = @_;
    my @found;
    my $starts = $index->{starts};
    for (my $i = lowerBound($starts, $low); $i < @$starts && $starts->[$i] <= $high; $i++) {
        push @found, @{ $index->{byStart}{ $starts->[$i] } };
    }
    return @found;
}

sub save {
    my ($self, $hdrId, $name, $extras) = @_;

    my $from_offset = $extras->{LocalHdrOffset};
    my $to_offset = $from_offset + $extras->{CompressedLength} - 1;
    my $crc = $extras->{CRC};

    $name = ::redactFilename($name);

    # An earlier entry the tool reports starts where this one does (a duplicate) or contains this
    # one's first or last byte, so it starts at most `longest` bytes before that byte.
    my $index = $self->{index} //= { starts => [], byStart => {}, longest => 0 };
    my $longest = $index->{longest};
    my %seen;
    my @candidates = sort { $a <=> $b } grep { !$seen{$_}++ }
        startingIn($index, $from_offset - $longest, $from_offset),
        startingIn($index, $to_offset - $longest, $to_offset);

    for my $entry ( map { $self->{detail}[$_] } @candidates )
    {
        if ( $from_offset == $entry->{from} && $to_offset == $entry->{to} && $crc == $entry->{crc})
        {
            $self->{duplicate_count} ++;
            print "$hdrId: '$name' matches with $entry->{str}\n"
        }
        elsif ( ($from_offset >= $entry->{from} && $from_offset <= $entry->{to} ) ||
                ($to_offset   >= $entry->{from} && $to_offset   <= $entry->{to} )
           )
        {
            $self->{overlap_count} ++;

            print "$hdrId: '$name' overlaps with $entry->{str}\n";
        }
    }

    push @{ $index->{byStart}{$from_offset} //= [] }, scalar @{ $self->{detail} };
    if (@{ $index->{byStart}{$from_offset} } == 1) {
        splice @{ $index->{starts} }, lowerBound($index->{starts}, $from_offset), 0, $from_offset;
    }
    $index->{longest} = $to_offset - $from_offset if $to_offset - $from_offset > $longest;

    push @{ $self->{detail} },
         {
            from => $from_offset,
            to   => $to_offset,
            length => $extras->{CompressedLength},
            id   => $hdrId,
            crc  => $crc,
            name => $name,
            str  => "$hdrId: '$name'",
         } ;
}

1;
