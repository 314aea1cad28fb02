import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString, Length, MaxLength } from 'class-validator';
import { MAX_CALENDAR_DATES, type Calendar } from '../../calendars';
import { NoControlCharacters } from '../../common';
import { PageQueryDto } from '../common/page-query.dto';

export class CreateCalendarDto {
  @ApiProperty({ example: 'de-holidays-2027', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name: string;

  @ApiProperty({
    type: [String],
    example: ['2027-12-25', '2027-12-26'],
    description: `Local dates (YYYY-MM-DD), at most ${MAX_CALENDAR_DATES}`,
  })
  @IsArray()
  @ArrayMaxSize(MAX_CALENDAR_DATES)
  @IsString({ each: true })
  @MaxLength(10, { each: true })
  dates: string[];
}

export class CalendarDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) dates: string[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(calendar: Calendar): CalendarDto {
    return {
      id: calendar.id,
      name: calendar.name,
      dates: calendar.dates,
      createdAt: calendar.createdAt.toISOString(),
    };
  }
}

export class CalendarPageDto {
  @ApiProperty({ type: [CalendarDto] }) items: CalendarDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class ListCalendarsQueryDto extends PageQueryDto {}
